#include "ParleyKernels.h"

// One compiled copy per instruction set, picked when the program loads: x86-64-v4 (AVX-512) and
// v3 (AVX2, FMA) where the CPU has them (4 and 2 times the lanes of SSE2), the baseline elsewhere.
#if defined(__x86_64__) && defined(__clang__) && defined(__ELF__)
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
