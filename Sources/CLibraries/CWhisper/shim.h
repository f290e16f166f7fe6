#ifndef PARLEY_CWHISPER_SHIM_H
#define PARLEY_CWHISPER_SHIM_H
#include <whisper.h>
#endif
