import CFlite
import Foundation
import ParleyCore

/// The process's flite voice and the serial queue every synthesis runs on.
///
/// flite keeps per-voice feature tables and some global state, so it is not reentrant. All
/// calls into flite happen on `queue`, one sentence at a time; concurrent sessions interleave
/// sentence by sentence. The queue's thread is a dispatch thread, never one of Swift's
/// cooperative threads.
final class FliteEngine: @unchecked Sendable {  // `queue` (serial) guards `voice` and every flite call.
    /// The shared engine, or `nil` if flite could not register its voice.
    static let shared: FliteEngine? = FliteEngine()

    /// The sample rate of cmu_us_slt.
    static let sampleRate = 16_000

    private let queue = DispatchQueue(label: "parley.flite")
    private let voice: UnsafeMutablePointer<cst_voice>

    private init?() {
        flite_init()
        guard let voice = register_cmu_us_slt(nil) else { return nil }
        self.voice = voice
    }

    /// Synthesises one sentence and returns its 16 kHz mono samples.
    /// - Parameters:
    ///   - sentence: plain ASCII text (see `FliteText`).
    ///   - durationStretch: 1 is the voice's normal pace, 2 twice as slow.
    /// - Throws: `ProviderError` when flite produces no audio at the expected rate.
    func synthesize(_ sentence: String, durationStretch: Float) async throws -> [Int16] {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                let voice = self.voice
                flite_feat_set_float(voice.pointee.features, "duration_stretch", durationStretch)
                guard let wave = flite_text_to_wave(sentence, voice) else {
                    return continuation.resume(throwing: ProviderError(.server, provider: "flite", message: "flite produced no audio"))
                }
                defer { delete_wave(wave) }
                let rate = Int(wave.pointee.sample_rate)
                let count = Int(max(0, wave.pointee.num_samples))
                guard rate == Self.sampleRate, wave.pointee.num_channels == 1 else {
                    return continuation.resume(throwing: ProviderError(
                        .server, provider: "flite",
                        message: "flite produced \(rate) Hz audio with \(wave.pointee.num_channels) channels; expected 16000 Hz mono"))
                }
                let samples = count == 0 || wave.pointee.samples == nil
                    ? [] : Array(UnsafeBufferPointer(start: wave.pointee.samples, count: count))
                continuation.resume(returning: samples)
            }
        }
    }
}
