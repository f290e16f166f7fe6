import Foundation

/// The text a speech recognizer heard in one utterance.
public struct Transcription: Sendable, Hashable, Codable {
    /// The recognised text, trimmed.
    public var text: String
    /// Seconds of audio that were transcribed.
    public var audioDuration: Double
    /// Seconds the recognizer spent.
    public var processingDuration: Double
    /// How sure the recognizer was of each word of the text, in order (0…1: the lowest
    /// probability among a word's tokens), or `nil` when it does not say.
    public var wordConfidences: [Float]?
    /// The language the recognizer heard the utterance in (ISO-639-1: the one it was told, or
    /// the one it detected), or `nil` when it does not say.
    public var language: String?

    /// Creates a transcription.
    public init(
        text: String, audioDuration: Double, processingDuration: Double, wordConfidences: [Float]? = nil, language: String? = nil
    ) {
        self.text = text
        self.audioDuration = audioDuration
        self.processingDuration = processingDuration
        self.wordConfidences = wordConfidences
        self.language = language
    }

    /// How sure the recognizer was of the last word, or `nil` when it does not say.
    /// `semantic_vad` does not let a doubtful last word decide that a thought is over: a
    /// mid-thought pause's dangling "to", "if" or "and" is what gets misheard ("too", "it",
    /// "veterans").
    public var lastWordConfidence: Float? { wordConfidences?.last }

    /// How sure the recognizer was of the word it was surest of, or `nil` when it does not
    /// say. Short speech over the agent in which the recognizer is sure of no word asks for
    /// nothing: a "sure" heard as "share", the agent's own voice leaking back.
    public var clearestWordConfidence: Float? { wordConfidences?.max() }
}

/// What a recognizer is told about an utterance before it listens (the transcription API's
/// `language` and `prompt`).
public struct TranscriptionHints: Sendable, Hashable {
    /// The spoken language as an ISO-639-1 code (`de`), or `nil` to let the recognizer detect
    /// it (a recognizer that hears one language only hears that one).
    public var language: String?
    /// Text in the style and vocabulary expected (names, spelling), as Whisper's initial
    /// prompt, or `nil`.
    public var prompt: String?

    /// Creates hints; `nil` leaves each to the recognizer.
    public init(language: String? = nil, prompt: String? = nil) {
        self.language = language
        self.prompt = prompt
    }
}

/// Turns speech audio into text.
///
/// A recognizer takes mono Float32 samples in `[-1, 1]` at its own `sampleRate`; callers
/// resample once before calling it. Partial transcripts while a person is still speaking
/// come from calling `transcribe` on the growing utterance with `isFinal == false`.
public protocol SpeechRecognizer: Sendable {
    /// The sample rate the recognizer expects, usually 16 kHz.
    var sampleRate: Int { get }
    /// Whether decoding is cheap enough to re-run on a growing utterance for live partials.
    var supportsPartials: Bool { get }
    /// The languages (ISO-639-1 codes) the recognizer can be told to hear, or `nil` when it
    /// does not say (a remote service takes whatever its model knows).
    var languages: Set<String>? { get }
    /// Transcribes one utterance.
    /// - Parameters:
    ///   - samples: mono samples at `sampleRate`.
    ///   - isFinal: `false` for a partial pass over audio that is still growing.
    /// - Throws: `ProviderError` when the recognizer fails; `CancellationError` when cancelled.
    func transcribe(_ samples: [Float], isFinal: Bool) async throws -> Transcription
    /// Transcribes one utterance, told its language and what is likely said. Recognizers that
    /// take no hints ignore them.
    func transcribe(_ samples: [Float], isFinal: Bool, hints: TranscriptionHints) async throws -> Transcription
}

extension SpeechRecognizer {
    /// Does not say.
    public var languages: Set<String>? { nil }

    /// Ignores the hints.
    public func transcribe(_ samples: [Float], isFinal: Bool, hints: TranscriptionHints) async throws -> Transcription {
        try await transcribe(samples, isFinal: isFinal)
    }
}
