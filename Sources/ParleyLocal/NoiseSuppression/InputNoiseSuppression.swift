import Foundation
import ParleyCore

/// The noise suppressor a session's `noise_reduction` gets, applied only while the input is
/// noisy with a steady noise (`LowSNRNoiseSuppressor`).
///
/// speexdsp's preprocessor at −15 dB, chosen by the `turns` bench area over webrtc-audio-
/// processing's suppressor: with Whisper tiny.en on flite speech it is the only one that does
/// not add word errors in babble at 5 dB SNR (96 → 93 %; webrtc 101 %) and it helps most in
/// white noise at 5 dB (86 → 59 %; webrtc 70 %); webrtc does better only in babble at 10 dB
/// (50 % against 64 %). Both cost clean speech a word in 80, which the gate avoids.
public enum InputNoiseSuppression {
    /// Makes the suppressor for `kind`, for frames of `frameLength` mono samples at `sampleRate`.
    public static func make(kind: NoiseReduction, frameLength: Int, sampleRate: Int) -> any NoiseSuppressor {
        LowSNRNoiseSuppressor(SpeexNoiseSuppressor(kind: kind, frameLength: frameLength, sampleRate: sampleRate))
    }
}
