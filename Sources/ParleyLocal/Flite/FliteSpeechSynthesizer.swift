import Foundation
import ParleyCore
import ParleySync

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
    /// English only.
    public var languages: Set<String>? { ["en"] }
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

    /// Synthesises `text`, yielding 16 kHz mono PCM16 chunks as flite makes them.
    ///
    /// `options.speed` scales the speaking rate (clamped to `speedRange`). Text without any
    /// letters or digits yields nothing. Cancelling the consuming task stops flite within
    /// a few milliseconds.
    public func synthesize(_ text: String, options: SpeechOptions) -> AsyncThrowingStream<[Int16], any Error> {
        let sentences = FliteText.sentences(of: text)
        let speed = options.speed.isFinite ? min(max(options.speed, Self.speedRange.lowerBound), Self.speedRange.upperBound) : 1
        let stretch = Float(1 / speed)
        let engine = engine
        let chunkLength = chunkLength
        return AsyncThrowingStream(bufferingPolicy: .unbounded) { continuation in
            let chunker = SampleChunker(chunkLength: chunkLength) { continuation.yield($0) }
            let producer = Task {
                do {
                    for sentence in sentences {
                        try Task.checkCancellation()
                        try await engine.synthesize(sentence, durationStretch: stretch) { chunker.add($0) }
                        chunker.flush()
                    }
                    try Task.checkCancellation()
                    continuation.finish()
                } catch is CancellationError {
                    continuation.finish(throwing: ProviderError(.cancelled, provider: "flite", message: "synthesis was cancelled"))
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in
                chunker.stop()
                producer.cancel()
            }
        }
    }
}

/// Cuts the samples flite streams into chunks of `chunkLength` for `yield`; once stopped (the
/// consumer has gone) it takes nothing more and tells flite to stop.
private final class SampleChunker: Sendable {
    private struct State {
        var pending: [Int16] = []
        var isStopped = false
    }

    private let chunkLength: Int
    private let yield: @Sendable ([Int16]) -> Void
    private let state = Locked(State())

    init(chunkLength: Int, yield: @escaping @Sendable ([Int16]) -> Void) {
        self.chunkLength = chunkLength
        self.yield = yield
    }

    /// Adds samples and yields every full chunk; `false` once stopped.
    func add(_ samples: [Int16]) -> Bool {
        let (chunks, stopped) = state.withLock { state -> ([[Int16]], Bool) in
            guard !state.isStopped else { return ([], true) }
            state.pending += samples
            var chunks: [[Int16]] = []
            while state.pending.count >= chunkLength {
                chunks.append(Array(state.pending.prefix(chunkLength)))
                state.pending.removeFirst(chunkLength)
            }
            return (chunks, false)
        }
        chunks.forEach(yield)
        return !stopped
    }

    /// Yields what is left of a sentence.
    func flush() {
        let rest = state.withLock { state -> [Int16] in
            defer { state.pending.removeAll() }
            return state.isStopped ? [] : state.pending
        }
        if !rest.isEmpty { yield(rest) }
    }

    /// Takes nothing more.
    func stop() {
        state.withLock { $0.isStopped = true }
    }
}
