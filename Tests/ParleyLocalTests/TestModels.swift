import Foundation
import ParleyCore
import ParleyTesting
@testable import ParleyLocal

/// The embedded stack's models, loaded once per test process. Setup always installs them, so
/// a missing model fails the test with the locator's message instead of skipping it.
enum TestModels {
    static let locator = ModelLocator()

    /// Ten everyday assistant requests, the fixture for speech round trips.
    static let sentences = SpokenSentences.all

    static let whisper: Result<WhisperSpeechRecognizer, any Error> = Result {
        try WhisperSpeechRecognizer(modelPath: locator.path(of: .whisperTinyEnglish))
    }

    /// The shared recognizer; throws the locator's error when the model is missing.
    static func recognizer() throws -> WhisperSpeechRecognizer { try whisper.get() }

    /// Synthesises `text` with flite and returns 16 kHz Float samples in [-1, 1].
    static func speech(_ text: String, speed: Double = 1) async throws -> [Float] {
        var samples: [Float] = []
        for try await chunk in try FliteSpeechSynthesizer().synthesize(text, options: SpeechOptions(speed: speed)) {
            samples.append(contentsOf: chunk.map { Float($0) / 32768 })
        }
        return samples
    }
}
