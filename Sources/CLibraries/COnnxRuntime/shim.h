#ifndef PARLEY_CONNXRUNTIME_SHIM_H
#define PARLEY_CONNXRUNTIME_SHIM_H
// onnxruntime's C API types only: the library is opened at run time with dlopen
// (see OnnxRuntimeLibrary), so a server without it falls back to flite.
#include <onnxruntime_c_api.h>
#endif
