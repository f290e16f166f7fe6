#ifndef PARLEY_CUSRSCTP_SHIM_H
#define PARLEY_CUSRSCTP_SHIM_H
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <usrsctp.h>


/* usrsctp_init_nothreads takes a variadic debug printer, which Swift cannot pass: this starts
 * usrsctp without its own threads (the caller drives timers) and without debug output. */
static inline void parley_usrsctp_init_nothreads(int (*output)(void *, void *, size_t, uint8_t, uint8_t)) {
    usrsctp_init_nothreads(0, output, NULL);
}
#endif
