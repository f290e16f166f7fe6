#ifndef PARLEY_CSOXR_SHIM_H
#define PARLEY_CSOXR_SHIM_H
#include <soxr.h>
#endif
