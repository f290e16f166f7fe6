#ifndef PARLEY_WEBRTC_AUDIO_PROCESSING_H
#define PARLEY_WEBRTC_AUDIO_PROCESSING_H
/* A C interface to the noise suppressor of webrtc-audio-processing (Debian's 0.3, a C++ API):
   one suppressor per audio stream, mono float samples in [-1, 1], 10 ms at a time. */
#ifdef __cplusplus
extern "C" {
#endif

typedef struct parley_webrtc_noise_suppressor parley_webrtc_noise_suppressor;

/* Makes a suppressor for mono audio at `sample_rate` (8000, 16000, 32000 or 48000) with
   suppression `level` 0 (low) … 3 (very high); `high_pass` non-zero also removes rumble
   below about 80 Hz. Returns NULL when the library refuses the settings. */
parley_webrtc_noise_suppressor *parley_webrtc_noise_suppressor_create(int sample_rate, int level, int high_pass);

/* Suppresses noise in place in `samples`, which hold 10 ms (sample_rate / 100 samples).
   Returns 0, or the library's error code (the samples are then left as they were). */
int parley_webrtc_noise_suppressor_process(parley_webrtc_noise_suppressor *suppressor, float *samples);

/* The suppressor's estimate that the last 10 ms held speech, 0…1. */
float parley_webrtc_noise_suppressor_speech_probability(const parley_webrtc_noise_suppressor *suppressor);

void parley_webrtc_noise_suppressor_destroy(parley_webrtc_noise_suppressor *suppressor);

#ifdef __cplusplus
}
#endif
#endif
