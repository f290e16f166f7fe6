#ifndef PARLEY_CLIBWEBSOCKETS_SHIM_H
#define PARLEY_CLIBWEBSOCKETS_SHIM_H
#include <libwebsockets.h>
#endif
