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

    /// Synthesises one sentence, handing its 16 kHz mono samples to `deliver` while flite is
    /// still making the rest (flite's audio streaming: the first samples come long before the
    /// sentence is done). `deliver` runs on the engine's queue; returning `false` stops flite.
    /// - Parameters:
    ///   - sentence: plain ASCII text (see `FliteText`).
    ///   - durationStretch: 1 is the voice's normal pace, 2 twice as slow.
    /// - Throws: `ProviderError` when flite produces no audio at the expected rate.
    func synthesize(_ sentence: String, durationStretch: Float, deliver: @escaping @Sendable ([Int16]) -> Bool) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            queue.async {
                let voice = self.voice
                flite_feat_set_float(voice.pointee.features, parley_flite_duration_stretch(), durationStretch)
                let stream = FliteStream(deliver: deliver)
                let info = new_audio_streaming_info()!
                info.pointee.asc = fliteStreamCallback
                info.pointee.userdata = Unmanaged.passUnretained(stream).toOpaque()
                // The feature owns `info` and frees it when removed.
                feat_set(voice.pointee.features, parley_flite_streaming_info(), audio_streaming_info_val(info))
                let wave = withExtendedLifetime(stream) { flite_text_to_wave(sentence, voice) }
                feat_remove(voice.pointee.features, parley_flite_streaming_info())
                guard let wave else {
                    return continuation.resume(throwing: ProviderError(.server, provider: "flite", message: "flite produced no audio"))
                }
                defer { delete_wave(wave) }
                let rate = Int(wave.pointee.sample_rate)
                guard rate == Self.sampleRate, wave.pointee.num_channels == 1 else {
                    return continuation.resume(throwing: ProviderError(
                        .server, provider: "flite",
                        message: "flite produced \(rate) Hz audio with \(wave.pointee.num_channels) channels; expected 16000 Hz mono"))
                }
                // Short sentences can end before flite streams anything: the rest comes from the wave.
                let count = Int(max(0, wave.pointee.num_samples))
                if count > stream.delivered, let samples = wave.pointee.samples {
                    _ = stream.deliver(Array(UnsafeBufferPointer(start: samples + stream.delivered, count: count - stream.delivered)))
                }
                continuation.resume()
            }
        }
    }
}

/// What flite's streaming callback hands samples to. Used only on the engine's queue.
private final class FliteStream: @unchecked Sendable {  // Confined to `FliteEngine.queue`.
    private let consumer: @Sendable ([Int16]) -> Bool
    /// Samples handed on so far.
    private(set) var delivered = 0

    init(deliver: @escaping @Sendable ([Int16]) -> Bool) { consumer = deliver }

    /// Hands `samples` on; `false` when the consumer wants no more.
    func deliver(_ samples: [Int16]) -> Bool {
        delivered += samples.count
        return consumer(samples)
    }
}

/// flite's audio streaming callback: passes the `size` new samples at `start` on.
private func fliteStreamCallback(
    wave: UnsafePointer<cst_wave>?, start: Int32, size: Int32, last: Int32, info: UnsafeMutablePointer<cst_audio_streaming_info>?
) -> Int32 {
    // The wave's rate is checked once flite has finished it.
    guard let wave, let userdata = info?.pointee.userdata, let samples = wave.pointee.samples, size > 0 else { return CST_AUDIO_STREAM_CONT }
    let stream = Unmanaged<FliteStream>.fromOpaque(userdata).takeUnretainedValue()
    let chunk = Array(UnsafeBufferPointer(start: samples + Int(start), count: Int(size)))
    return stream.deliver(chunk) ? CST_AUDIO_STREAM_CONT : CST_AUDIO_STREAM_STOP
}
