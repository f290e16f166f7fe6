import Foundation
import ParleyCore

/// A speech recognizer for end-to-end tests that always hears the same words, at once.
public struct FixedSpeechRecognizer: SpeechRecognizer {
    /// What every utterance transcribes to.
    public var text: String
    public let sampleRate = 16_000
    public let supportsPartials = false

    /// Creates a recognizer that hears `text`.
    public init(text: String = "hello there") {
        self.text = text
    }

    public func transcribe(_ samples: [Float], isFinal: Bool) async throws -> Transcription {
        Transcription(text: text, audioDuration: Double(samples.count) / 16_000, processingDuration: 0)
    }
}
