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

/// values[i] += other[i] for each of `count` values, in place.
void parley_add(float *values, const float *other, long count);

/// Adds `row` (`columns` floats) to each of `rows` rows of `columns` floats, in place.
void parley_add_to_rows(float *values, long rows, long columns, const float *row);

/// Multiplies each of `count` values by `factor`, in place.
void parley_scale(float *values, long count, float factor);

/// tanh of each of `count` values, in place.
void parley_tanh(float *values, long count);

/// Writes the transpose of the row-major `rows` × `columns` matrix `input` to `output`
/// (`columns` × `rows`).
void parley_transpose(const float *input, long rows, long columns, float *output);

/// The inputs of a kernel-3, padding-1 convolution over time: for each of `steps` output steps
/// (input frame step·stride − 1 … + 1, zeros outside the `frames` rows of `channels` floats),
/// `channels` × 3 floats, channel-major (`columns[(step · channels + channel) · 3 + tap]`).
void parley_convolution_columns(const float *input, long frames, long channels, long stride,
                                long steps, float *columns);

/// Zero mean and unit variance (1e-7 added to the variance, sums in double), in place.
void parley_normalise(float *values, long count);

/// |X|² of each of `bins` bins per frame, from `frames` rows of `columns` floats holding the
/// real parts (first `bins`) then the imaginary parts (next `bins`); `power` is `frames` × `bins`.
void parley_power_spectrum(const float *spectrum, long frames, long columns, long bins, float *power);

/// Whisper's log-mel scaling, in place: log10 (of at least 1e-10), floored 8 below the largest
/// value, then (x + 4) / 4.
void parley_whisper_log_scale(float *values, long count);

#endif
