import CSpeexDSP
import Foundation
import ParleyCore

/// Noise suppression on speexdsp's preprocessor: a spectral-subtraction denoiser that learns
/// the steady noise floor as it goes, with automatic gain control, voice detection and
/// dereverberation left off (the VAD and the recognizer want the level as spoken).
///
/// ```swift
/// var suppressor = SpeexNoiseSuppressor(kind: .farField, frameLength: 512, sampleRate: 16_000)
/// suppressor.suppress(&frame)
/// ```
///
/// `@unchecked Sendable`: the speexdsp state is only used while holding `lock`.
public final class SpeexNoiseSuppressor: NoiseSuppressor, @unchecked Sendable {
    /// How far noise is pushed down: near field −15 dB (speexdsp's default), far field −25 dB.
    public static func suppressionDB(for kind: NoiseReduction) -> Int32 {
        switch kind {
        case .nearField: -15
        case .farField: -25
        }
    }

    /// The frame length the state was made for.
    public let frameLength: Int
    /// Guards `state` and `buffer`.
    private let lock = NSLock()
    private let state: OpaquePointer
    private var buffer: [Int16]

    /// Creates a suppressor for frames of `frameLength` mono samples at `sampleRate`.
    public init(kind: NoiseReduction, frameLength: Int, sampleRate: Int) {
        self.frameLength = max(frameLength, 1)
        buffer = [Int16](repeating: 0, count: self.frameLength)
        state = speex_preprocess_state_init(Int32(self.frameLength), Int32(sampleRate))
        var on: Int32 = 1
        var off: Int32 = 0
        var suppression = Self.suppressionDB(for: kind)
        speex_preprocess_ctl(state, SPEEX_PREPROCESS_SET_DENOISE, &on)
        speex_preprocess_ctl(state, SPEEX_PREPROCESS_SET_NOISE_SUPPRESS, &suppression)
        speex_preprocess_ctl(state, SPEEX_PREPROCESS_SET_AGC, &off)
        speex_preprocess_ctl(state, SPEEX_PREPROCESS_SET_VAD, &off)
        speex_preprocess_ctl(state, SPEEX_PREPROCESS_SET_DEREVERB, &off)
    }

    deinit { speex_preprocess_state_destroy(state) }

    /// Suppresses noise in `frame` (which must hold `frameLength` samples; others pass as they are).
    public func suppress(_ frame: inout [Float]) {
        guard frame.count == frameLength else { return }
        lock.withLock {
            for index in 0..<frameLength {
                buffer[index] = Int16(max(-32_768, min(32_767, (frame[index] * 32_768).rounded())))
            }
            buffer.withUnsafeMutableBufferPointer { samples in _ = speex_preprocess_run(state, samples.baseAddress) }
            for index in 0..<frameLength { frame[index] = Float(buffer[index]) / 32_768 }
        }
    }
}
