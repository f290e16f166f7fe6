#ifndef PARLEY_CSRTP_SHIM_H
#define PARLEY_CSRTP_SHIM_H
#include <srtp2/srtp.h>
#endif
