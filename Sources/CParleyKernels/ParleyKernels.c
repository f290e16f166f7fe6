#include "ParleyKernels.h"

#include <float.h>
#include <math.h>

// One compiled copy per instruction set, picked when the program loads: x86-64-v4 (AVX-512) and
// v3 (AVX2, FMA) where the CPU has them (4 and 2 times the lanes of SSE2), the baseline elsewhere.
// Sanitizer builds keep the baseline only: the loader runs the per-CPU resolvers before the
// sanitizer's runtime is set up, and their instrumented entry then crashes the program.
#ifndef __has_feature
#define __has_feature(feature) 0
#endif
#if defined(__x86_64__) && defined(__clang__) && defined(__ELF__) \
    && !__has_feature(thread_sanitizer) && !__has_feature(address_sanitizer)
#define PARLEY_PER_INSTRUCTION_SET __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define PARLEY_PER_INSTRUCTION_SET
#endif

PARLEY_PER_INSTRUCTION_SET
void parley_dot_rows(const float *matrix, long rows, long columns,
                     const float *vectors, long vectorStride, long vectorCount, float *out) {
    for (long row = 0; row < rows; row++) {
        const float *weights = matrix + row * columns;
        for (long vector = 0; vector < vectorCount; vector++) {
            const float *values = vectors + vector * vectorStride;
            float sum = 0;
            for (long index = 0; index < columns; index++) {
                sum += weights[index] * values[index];
            }
            out[row * vectorCount + vector] = sum;
        }
    }
}

// Tiles of C: 4 rows × 64 columns held in registers while k runs (16 AVX-512 vectors); measured
// here at ~100 GFLOPS on one core, against ~28 for tiles of 32 columns.
#define TILE_ROWS 4
#define TILE_COLUMNS 64

// One tile of C, full size, accumulating over all of k.
static inline void parley_matmul_tile(const float *a, long lda, const float *b, long ldb,
                                      float *c, long ldc, long k) {
    float sums[TILE_ROWS][TILE_COLUMNS] = {{0}};
    for (long p = 0; p < k; p++) {
        const float *bRow = b + p * ldb;
        for (int r = 0; r < TILE_ROWS; r++) {
            const float scale = a[r * lda + p];
            for (int j = 0; j < TILE_COLUMNS; j++) sums[r][j] += scale * bRow[j];
        }
    }
    for (int r = 0; r < TILE_ROWS; r++) {
        for (int j = 0; j < TILE_COLUMNS; j++) c[r * ldc + j] = sums[r][j];
    }
}

// Any part of C, one element at a time (the edges the tiles do not cover).
static void parley_matmul_edge(const float *a, long lda, const float *b, long ldb, float *c,
                               long ldc, long rowStart, long rowEnd, long columnStart,
                               long columnEnd, long k) {
    for (long i = rowStart; i < rowEnd; i++) {
        for (long j = columnStart; j < columnEnd; j++) c[i * ldc + j] = 0;
        for (long p = 0; p < k; p++) {
            const float scale = a[i * lda + p];
            for (long j = columnStart; j < columnEnd; j++) c[i * ldc + j] += scale * b[p * ldb + j];
        }
    }
}

PARLEY_PER_INSTRUCTION_SET
void parley_matmul(const float *a, long lda, const float *b, long ldb, float *c, long ldc,
                   long m, long n, long k) {
    const long fullRows = m - m % TILE_ROWS, fullColumns = n - n % TILE_COLUMNS;
    // Column panels outermost: a panel of B (k × 32) stays in cache while every row of A passes.
    for (long j = 0; j < fullColumns; j += TILE_COLUMNS) {
        for (long i = 0; i < fullRows; i += TILE_ROWS) {
            parley_matmul_tile(a + i * lda, lda, b + j, ldb, c + i * ldc + j, ldc, k);
        }
    }
    parley_matmul_edge(a, lda, b, ldb, c, ldc, fullRows, m, 0, n, k);
    parley_matmul_edge(a, lda, b, ldb, c, ldc, 0, fullRows, fullColumns, n, k);
}

PARLEY_PER_INSTRUCTION_SET
void parley_round_to_uint8_steps(float *values, long count, float scale, float zeroPoint) {
    for (long index = 0; index < count; index++) {
        float step = __builtin_rintf(values[index] / scale) + zeroPoint;
        step = step < 0 ? 0 : (step > 255 ? 255 : step);
        values[index] = (step - zeroPoint) * scale;
    }
}

// e^x for x in −87 … 88 with a relative error of about 2e-7: x = n·ln 2 + r, e^r from a
// degree-6 polynomial (Cephes' coefficients), 2^n put into the exponent bits. Unlike libm's
// expf it inlines, so the loops that call it run several lanes at a time.
static inline float parley_exp(float x) {
    x = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
    const float n = __builtin_rintf(x * 1.44269504088896341f);
    const float r = x - n * 0.693359375f + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    const float y = p * r * r + r + 1.0f;
    union { int bits; float value; } scale = { .bits = ((int)n + 127) << 23 };
    return y * scale.value;
}

// erf(x) with an absolute error below 1.5e-7 (Abramowitz and Stegun 7.1.26), inlined for the
// same reason as parley_exp.
static inline float parley_erf(float x) {
    const float magnitude = x < 0 ? -x : x;
    const float t = 1.0f / (1.0f + 0.3275911f * magnitude);
    const float polynomial =
        t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
    const float result = 1.0f - polynomial * parley_exp(-magnitude * magnitude);
    return x < 0 ? -result : result;
}

PARLEY_PER_INSTRUCTION_SET
void parley_gelu(float *values, long count) {
    for (long index = 0; index < count; index++) {
        const float x = values[index];
        values[index] = 0.5f * x * (1.0f + parley_erf(x * 0.70710678118654752f));
    }
}

PARLEY_PER_INSTRUCTION_SET
void parley_layer_norm(float *values, long rows, long columns, const float *weight,
                       const float *bias, float epsilon) {
    for (long row = 0; row < rows; row++) {
        float *x = values + row * columns;
        float sum = 0;
        for (long j = 0; j < columns; j++) sum += x[j];
        const float mean = sum / columns;
        float squares = 0;
        for (long j = 0; j < columns; j++) squares += (x[j] - mean) * (x[j] - mean);
        const float inverse = 1.0f / sqrtf(squares / columns + epsilon);
        for (long j = 0; j < columns; j++) x[j] = (x[j] - mean) * inverse * weight[j] + bias[j];
    }
}

PARLEY_PER_INSTRUCTION_SET
void parley_softmax_rows(float *values, long rows, long columns) {
    for (long row = 0; row < rows; row++) {
        float *x = values + row * columns;
        float largest = x[0];
        for (long j = 1; j < columns; j++) largest = x[j] > largest ? x[j] : largest;
        float sum = 0;
        for (long j = 0; j < columns; j++) {
            x[j] = parley_exp(x[j] - largest);
            sum += x[j];
        }
        const float inverse = 1.0f / sum;
        for (long j = 0; j < columns; j++) x[j] *= inverse;
    }
}

PARLEY_PER_INSTRUCTION_SET
void parley_add(float *values, const float *other, long count) {
    for (long index = 0; index < count; index++) values[index] += other[index];
}

PARLEY_PER_INSTRUCTION_SET
void parley_add_to_rows(float *values, long rows, long columns, const float *row) {
    for (long r = 0; r < rows; r++) {
        float *x = values + r * columns;
        for (long j = 0; j < columns; j++) x[j] += row[j];
    }
}

PARLEY_PER_INSTRUCTION_SET
void parley_scale(float *values, long count, float factor) {
    for (long index = 0; index < count; index++) values[index] *= factor;
}

void parley_tanh(float *values, long count) {
    for (long index = 0; index < count; index++) values[index] = tanhf(values[index]);
}

void parley_transpose(const float *input, long rows, long columns, float *output) {
    // Blocks of 16 × 16 so reads and writes both stay within a few cache lines.
    for (long r0 = 0; r0 < rows; r0 += 16) {
        for (long c0 = 0; c0 < columns; c0 += 16) {
            const long rEnd = r0 + 16 < rows ? r0 + 16 : rows, cEnd = c0 + 16 < columns ? c0 + 16 : columns;
            for (long r = r0; r < rEnd; r++) {
                for (long c = c0; c < cEnd; c++) output[c * rows + r] = input[r * columns + c];
            }
        }
    }
}

void parley_convolution_columns(const float *input, long frames, long channels, long stride,
                                long steps, float *columns) {
    for (long step = 0; step < steps; step++) {
        float *out = columns + step * channels * 3;
        for (int tap = 0; tap < 3; tap++) {
            const long frame = step * stride + tap - 1;
            if (frame < 0 || frame >= frames) {
                for (long channel = 0; channel < channels; channel++) out[channel * 3 + tap] = 0;
            } else {
                const float *in = input + frame * channels;
                for (long channel = 0; channel < channels; channel++) out[channel * 3 + tap] = in[channel];
            }
        }
    }
}

void parley_normalise(float *values, long count) {
    double sum = 0;
    for (long index = 0; index < count; index++) sum += values[index];
    const double mean = sum / count;
    double squares = 0;
    for (long index = 0; index < count; index++) {
        const double centred = values[index] - mean;
        squares += centred * centred;
    }
    const double scale = 1 / sqrt(squares / count + 1e-7);
    for (long index = 0; index < count; index++) values[index] = (float)((values[index] - mean) * scale);
}

PARLEY_PER_INSTRUCTION_SET
void parley_power_spectrum(const float *spectrum, long frames, long columns, long bins, float *power) {
    for (long frame = 0; frame < frames; frame++) {
        const float *real = spectrum + frame * columns, *imaginary = real + bins;
        float *out = power + frame * bins;
        for (long bin = 0; bin < bins; bin++) out[bin] = real[bin] * real[bin] + imaginary[bin] * imaginary[bin];
    }
}

void parley_whisper_log_scale(float *values, long count) {
    float largest = -FLT_MAX;
    for (long index = 0; index < count; index++) {
        values[index] = log10f(values[index] > 1e-10f ? values[index] : 1e-10f);
        largest = values[index] > largest ? values[index] : largest;
    }
    const float floor = largest - 8;
    for (long index = 0; index < count; index++) values[index] = ((values[index] > floor ? values[index] : floor) + 4) / 4;
}
