#ifndef PARLEY_CMALLOC_SHIM_H
#define PARLEY_CMALLOC_SHIM_H
/* glibc's allocator settings (mallopt), which Swift's Glibc module leaves out. Empty elsewhere. */
#if defined(__GLIBC__) || (defined(__linux__) && __has_include(<malloc.h>))
#include <malloc.h>
#endif
#endif
