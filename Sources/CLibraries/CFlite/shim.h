#ifndef PARLEY_CFLITE_SHIM_H
#define PARLEY_CFLITE_SHIM_H
#include <flite/flite.h>
/* The voice registration function of the cmu_us_slt voice library has no public header. */
cst_voice *register_cmu_us_slt(const char *voxdir);
void unregister_cmu_us_slt(cst_voice *v);

/* flite keeps a feature's name as the pointer it was given, so names must live as long as
   the voice: C string literals, not the temporary buffers Swift passes for its strings. */
static inline const char *parley_flite_duration_stretch(void) { return "duration_stretch"; }
static inline const char *parley_flite_streaming_info(void) { return "streaming_info"; }
#endif
