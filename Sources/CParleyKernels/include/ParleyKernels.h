#ifndef PARLEY_KERNELS_H
#define PARLEY_KERNELS_H

/// Numeric inner loops for the Silero network, compiled optimised and vectorised even in debug
/// builds (the Swift around them stays debuggable; these loops are most of the work).

/// Dot products of every row of a row-major `rows` × `columns` matrix with each of
/// `vectorCount` vectors of `columns` floats, the v-th starting at `vectors + v * vectorStride`
/// (vectors may overlap). `out[row * vectorCount + v]` receives row · vector v.
void parley_dot_rows(const float *matrix, long rows, long columns,
                     const float *vectors, long vectorStride, long vectorCount, float *out);

#endif
