import Foundation
import ParleyCore

/// The noise suppressor a session's `noise_reduction` gets: the one that measured best (see
/// DESIGN.md, "Noise reduction"), applied only while the input is noisy.
public enum InputNoiseSuppression {
    /// Makes the suppressor for `kind`, for frames of `frameLength` mono samples at `sampleRate`.
    public static func make(kind: NoiseReduction, frameLength: Int, sampleRate: Int) -> any NoiseSuppressor {
        LowSNRNoiseSuppressor(SpeexNoiseSuppressor(kind: kind, frameLength: frameLength, sampleRate: sampleRate))
    }
}
