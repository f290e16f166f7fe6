#ifndef PARLEY_KERNELS_H
#define PARLEY_KERNELS_H

/// Numeric inner loops for the Silero network, compiled optimised and vectorised even in debug
/// builds (the Swift around them stays debuggable; these loops are most of the work).

/// The dot product of `count` floats at `a` and `b`.
float parley_dot(const float *a, const float *b, long count);

#endif
