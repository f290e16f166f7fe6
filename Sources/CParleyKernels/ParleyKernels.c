#include "ParleyKernels.h"

float parley_dot(const float *a, const float *b, long count) {
    float sum = 0;
    for (long index = 0; index < count; index++) {
        sum += a[index] * b[index];
    }
    return sum;
}
