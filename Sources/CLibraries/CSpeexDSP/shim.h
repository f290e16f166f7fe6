#ifndef PARLEY_CSPEEXDSP_SHIM_H
#define PARLEY_CSPEEXDSP_SHIM_H
#include <speex/speex_preprocess.h>
#include <speex/speex_echo.h>
#endif
