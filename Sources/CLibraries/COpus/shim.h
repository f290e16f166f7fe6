#ifndef PARLEY_COPUS_SHIM_H
#define PARLEY_COPUS_SHIM_H
#include <opus/opus.h>

/* opus_encoder_ctl and opus_decoder_ctl are variadic, which Swift cannot call: one shim per request used. */
static inline int parley_opus_set_bitrate(OpusEncoder *encoder, opus_int32 bitrate) {
    return opus_encoder_ctl(encoder, OPUS_SET_BITRATE(bitrate));
}
static inline int parley_opus_set_inband_fec(OpusEncoder *encoder, opus_int32 enabled) {
    return opus_encoder_ctl(encoder, OPUS_SET_INBAND_FEC(enabled));
}
static inline int parley_opus_set_packet_loss_percent(OpusEncoder *encoder, opus_int32 percent) {
    return opus_encoder_ctl(encoder, OPUS_SET_PACKET_LOSS_PERC(percent));
}
static inline int parley_opus_set_complexity(OpusEncoder *encoder, opus_int32 complexity) {
    return opus_encoder_ctl(encoder, OPUS_SET_COMPLEXITY(complexity));
}
#endif
