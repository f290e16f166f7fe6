import Foundation
import ParleyCore

/// A speech recognizer for tests that answers from a script instead of listening.
///
/// Each final transcription takes the next scripted result; partial passes answer with the
/// prefix of the next result that matches how much audio has arrived. Every call is recorded.
public final class ScriptedSpeechRecognizer: SpeechRecognizer, @unchecked Sendable {
    // @unchecked Sendable: `script`, `calls` and `givenHints` are guarded by `lock`.
    private let lock = NSLock()
    private var script: [Result<String, ProviderError>]
    private var calls: [(sampleCount: Int, isFinal: Bool)] = []
    private var givenHints: [TranscriptionHints] = []
    private let gate: AsyncGate?
    private let wordConfidence: Float?
    private let language: String?

    public let sampleRate: Int
    public let supportsPartials: Bool

    /// Creates a recognizer that answers `results` in order to final transcriptions.
    /// - Parameters:
    ///   - gate: when given, every final transcription waits for the gate to open.
    ///   - wordConfidence: how sure every transcription says it is of each of its words.
    ///   - language: the language every transcription says it heard.
    public init(
        results: [Result<String, ProviderError>], sampleRate: Int = 16_000, supportsPartials: Bool = true,
        gate: AsyncGate? = nil, wordConfidence: Float? = nil, language: String? = nil
    ) {
        self.language = language
        script = results
        self.sampleRate = sampleRate
        self.supportsPartials = supportsPartials
        self.gate = gate
        self.wordConfidence = wordConfidence
    }

    /// Creates a recognizer that hears `texts` in order, as sure of each word as `wordConfidence` says.
    public convenience init(texts: [String], wordConfidence: Float? = nil) {
        self.init(results: texts.map { .success($0) }, wordConfidence: wordConfidence)
    }

    /// The final transcriptions asked for so far: sample counts of each utterance.
    public var finalUtteranceSampleCounts: [Int] {
        lock.withLock { calls.filter(\.isFinal).map(\.sampleCount) }
    }

    /// The number of partial passes asked for so far.
    public var partialCallCount: Int { lock.withLock { calls.filter { !$0.isFinal }.count } }

    /// The hints of every transcription asked for with hints, in order.
    public var hints: [TranscriptionHints] { lock.withLock { givenHints } }

    /// Records `hints`, then answers as `transcribe(_:isFinal:)` does.
    public func transcribe(_ samples: [Float], isFinal: Bool, hints: TranscriptionHints) async throws -> Transcription {
        lock.withLock { givenHints.append(hints) }
        return try await transcribe(samples, isFinal: isFinal)
    }

    public func transcribe(_ samples: [Float], isFinal: Bool) async throws -> Transcription {
        if isFinal, let gate { await gate.wait() }
        try Task.checkCancellation()
        let next: Result<String, ProviderError>? = lock.withLock {
            calls.append((samples.count, isFinal))
            guard !script.isEmpty else { return nil }
            return isFinal ? script.removeFirst() : script[0]
        }
        let duration = Double(samples.count) / Double(sampleRate)
        switch next {
        case .success(let text)?:
            let shown = isFinal ? text : String(text.split(separator: " ").prefix(max(1, Int(duration * 3))).joined(separator: " "))
            let confidences = wordConfidence.map { Array(repeating: $0, count: shown.split(separator: " ").count) }
            return Transcription(text: shown, audioDuration: duration, processingDuration: 0, wordConfidences: confidences, language: language)
        case .failure(let error)?:
            throw error
        case nil:
            return Transcription(text: "", audioDuration: duration, processingDuration: 0)
        }
    }
}
