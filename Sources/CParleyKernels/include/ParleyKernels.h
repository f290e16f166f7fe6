#ifndef PARLEY_KERNELS_H
#define PARLEY_KERNELS_H

/// Numeric inner loops for the Silero and Smart Turn networks, compiled optimised and vectorised
/// even in debug builds (the Swift around them stays debuggable; these loops are most of the work).

/// Dot products of every row of a row-major `rows` × `columns` matrix with each of
/// `vectorCount` vectors of `columns` floats, the v-th starting at `vectors + v * vectorStride`
/// (vectors may overlap). `out[row * vectorCount + v]` receives row · vector v.
void parley_dot_rows(const float *matrix, long rows, long columns,
                     const float *vectors, long vectorStride, long vectorCount, float *out);

/// The matrix product C = A · B of row-major matrices: A is `m` × `k` with rows `lda` floats
/// apart, B is `k` × `n` with rows `ldb` apart, C is `m` × `n` with rows `ldc` apart.
void parley_matmul(const float *a, long lda, const float *b, long ldb, float *c, long ldc,
                   long m, long n, long k);

/// Rounds each of `count` values to the nearest step of an 8-bit unsigned quantiser (`scale`,
/// `zeroPoint`; ties to even, clamped to 0…255) and back to float, in place: the value an int8
/// network computes on.
void parley_round_to_uint8_steps(float *values, long count, float scale, float zeroPoint);

/// GELU (the exact form, x · Φ(x)) of each of `count` values, in place.
void parley_gelu(float *values, long count);

/// Layer normalisation of each of `rows` rows of `columns` floats, in place:
/// (x − mean) / sqrt(variance + epsilon) · weight + bias.
void parley_layer_norm(float *values, long rows, long columns, const float *weight,
                       const float *bias, float epsilon);

/// Softmax of each of `rows` rows of `columns` floats, in place.
void parley_softmax_rows(float *values, long rows, long columns);

#endif
