#ifndef PARLEY_CFLITE_SHIM_H
#define PARLEY_CFLITE_SHIM_H
#include <flite/flite.h>
/* The voice registration function of the cmu_us_slt voice library has no public header. */
cst_voice *register_cmu_us_slt(const char *voxdir);
void unregister_cmu_us_slt(cst_voice *v);
#endif
