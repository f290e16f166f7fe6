import Foundation
import ParleyCore

/// Text-to-speech in process with flite's cmu_us_slt voice: 16 kHz mono, synthesised
/// sentence by sentence so the first sentence plays while the rest is still being made.
///
/// Safe to share between sessions: flite runs on one serial queue, one sentence at a time.
///
/// ```swift
/// let tts = try FliteSpeechSynthesizer()
/// for try await chunk in tts.synthesize("Hello there. How can I help?", options: SpeechOptions()) {
///     play(chunk)  // PCM16 at 16 kHz
/// }
/// ```
public struct FliteSpeechSynthesizer: SpeechSynthesizer {
    /// The voices this synthesizer has; any other `SpeechOptions.voice` (for example an
    /// OpenAI voice name sent by a client) falls back to the default voice.
    public static let voices = ["slt"]
    /// The slowest and fastest speaking rates accepted; others are clamped.
    public static let speedRange = 0.25...4.0

    /// cmu_us_slt speaks at 16 kHz.
    public var sampleRate: Int { FliteEngine.sampleRate }
    /// The most samples in one yielded chunk (100 ms).
    public var chunkLength: Int

    private let engine: FliteEngine

    /// Prepares flite's voice.
    /// - Parameter chunkLength: the most samples per yielded chunk; at least 1.
    /// - Throws: `ProviderError` when flite cannot register its voice.
    public init(chunkLength: Int = 1_600) throws {
        guard let engine = FliteEngine.shared else {
            throw ProviderError(.server, provider: "flite", message: "flite could not register the cmu_us_slt voice")
        }
        self.engine = engine
        self.chunkLength = max(1, chunkLength)
    }

    /// Synthesises `text`, yielding 16 kHz mono PCM16 chunks sentence by sentence.
    ///
    /// `options.speed` scales the speaking rate (clamped to `speedRange`). Text without any
    /// letters or digits yields nothing. Cancelling the consuming task stops after the
    /// sentence being synthesised.
    public func synthesize(_ text: String, options: SpeechOptions) -> AsyncThrowingStream<[Int16], any Error> {
        let sentences = FliteText.sentences(of: text)
        let speed = options.speed.isFinite ? min(max(options.speed, Self.speedRange.lowerBound), Self.speedRange.upperBound) : 1
        let stretch = Float(1 / speed)
        let engine = engine
        let chunkLength = chunkLength
        return AsyncThrowingStream(bufferingPolicy: .unbounded) { continuation in
            let producer = Task {
                do {
                    for sentence in sentences {
                        try Task.checkCancellation()
                        let samples = try await engine.synthesize(sentence, durationStretch: stretch)
                        var start = 0
                        while start < samples.count {
                            let end = min(start + chunkLength, samples.count)
                            continuation.yield(Array(samples[start..<end]))
                            start = end
                        }
                    }
                    continuation.finish()
                } catch is CancellationError {
                    continuation.finish(throwing: ProviderError(.cancelled, provider: "flite", message: "synthesis was cancelled"))
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in producer.cancel() }
        }
    }
}
