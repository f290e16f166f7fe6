// The C interface of ParleyWebRTCAudioProcessing.h over webrtc::AudioProcessing (0.3).
#include "ParleyWebRTCAudioProcessing.h"

#include <webrtc/modules/audio_processing/include/audio_processing.h>

struct parley_webrtc_noise_suppressor {
    webrtc::AudioProcessing *processing;
    webrtc::StreamConfig stream;
};

extern "C" parley_webrtc_noise_suppressor *parley_webrtc_noise_suppressor_create(int sample_rate, int level, int high_pass) {
    static const webrtc::NoiseSuppression::Level levels[] = {
        webrtc::NoiseSuppression::kLow, webrtc::NoiseSuppression::kModerate,
        webrtc::NoiseSuppression::kHigh, webrtc::NoiseSuppression::kVeryHigh,
    };
    if (level < 0 || level > 3) return nullptr;
    webrtc::AudioProcessing *processing = webrtc::AudioProcessing::Create();
    if (processing == nullptr) return nullptr;
    webrtc::StreamConfig stream(sample_rate, 1, false);
    webrtc::ProcessingConfig config = {{stream, stream, stream, stream}};
    if (processing->Initialize(config) != webrtc::AudioProcessing::kNoError
        || processing->noise_suppression()->set_level(levels[level]) != webrtc::AudioProcessing::kNoError
        || processing->noise_suppression()->Enable(true) != webrtc::AudioProcessing::kNoError
        || processing->high_pass_filter()->Enable(high_pass != 0) != webrtc::AudioProcessing::kNoError) {
        delete processing;
        return nullptr;
    }
    return new parley_webrtc_noise_suppressor{processing, stream};
}

extern "C" int parley_webrtc_noise_suppressor_process(parley_webrtc_noise_suppressor *suppressor, float *samples) {
    float *channels[] = {samples};
    return suppressor->processing->ProcessStream(channels, suppressor->stream, suppressor->stream, channels);
}

extern "C" float parley_webrtc_noise_suppressor_speech_probability(const parley_webrtc_noise_suppressor *suppressor) {
    return suppressor->processing->noise_suppression()->speech_probability();
}

extern "C" void parley_webrtc_noise_suppressor_destroy(parley_webrtc_noise_suppressor *suppressor) {
    if (suppressor == nullptr) return;
    delete suppressor->processing;
    delete suppressor;
}
