import Foundation

/// The text a speech recognizer heard in one utterance.
public struct Transcription: Sendable, Hashable, Codable {
    /// The recognised text, trimmed.
    public var text: String
    /// Seconds of audio that were transcribed.
    public var audioDuration: Double
    /// Seconds the recognizer spent.
    public var processingDuration: Double
    /// How sure the recognizer was of the text's last word (0…1: the lowest probability among
    /// its tokens), or `nil` when it does not say. `semantic_vad` does not let a doubtful last
    /// word decide that a thought is over: a mid-thought pause's dangling "to", "if" or "and"
    /// is what gets misheard ("too", "it", "veterans").
    public var lastWordConfidence: Float?

    /// Creates a transcription.
    public init(text: String, audioDuration: Double, processingDuration: Double, lastWordConfidence: Float? = nil) {
        self.text = text
        self.audioDuration = audioDuration
        self.processingDuration = processingDuration
        self.lastWordConfidence = lastWordConfidence
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
    /// Transcribes one utterance.
    /// - Parameters:
    ///   - samples: mono samples at `sampleRate`.
    ///   - isFinal: `false` for a partial pass over audio that is still growing.
    /// - Throws: `ProviderError` when the recognizer fails; `CancellationError` when cancelled.
    func transcribe(_ samples: [Float], isFinal: Bool) async throws -> Transcription
    /// Transcribes one utterance, told what is likely said (`prompt`: text in the style and
    /// vocabulary expected, as Whisper's initial prompt and the transcription API's `prompt`).
    /// Recognizers that take no prompt ignore it.
    func transcribe(_ samples: [Float], isFinal: Bool, prompt: String?) async throws -> Transcription
}

extension SpeechRecognizer {
    /// Ignores the prompt.
    public func transcribe(_ samples: [Float], isFinal: Bool, prompt: String?) async throws -> Transcription {
        try await transcribe(samples, isFinal: isFinal)
    }
}
