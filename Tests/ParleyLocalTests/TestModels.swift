import Foundation
import ParleyCore
import ParleyTesting
@testable import ParleyLocal

/// The embedded stack's models, loaded once per test process. Setup always installs them, so
/// a missing model fails the test with the locator's message instead of skipping it.
enum TestModels {
    static let locator = ModelLocator()

    /// The fixture for speech round trips.
    static let sentences = EverydaySentences.all

    static let whisper: Result<WhisperSpeechRecognizer, any Error> = Result {
        try WhisperSpeechRecognizer(modelPath: locator.path(of: .whisperTinyEnglish))
    }

    /// The shared recognizer; throws the locator's error when the model is missing.
    static func recognizer() throws -> WhisperSpeechRecognizer { try whisper.get() }

    static let whisperBase: Result<WhisperSpeechRecognizer, any Error> = Result {
        try WhisperSpeechRecognizer(modelPath: locator.path(of: .whisperBase))
    }

    /// The shared multilingual recognizer (Whisper base).
    static func baseRecognizer() throws -> WhisperSpeechRecognizer { try whisperBase.get() }

    static let piper: Result<PiperSpeechSynthesizer, any Error> = Result {
        try PiperSpeechSynthesizer(modelPath: locator.path(of: .piperJoe), onnxRuntimePath: locator.onnxRuntimeLibraryPath())
    }

    /// The shared Piper voice; throws the locator's or the loader's error when it cannot load.
    static func piperVoice() throws -> PiperSpeechSynthesizer { try piper.get() }

    /// Synthesises `text` with the Piper voice and returns 16 kHz Float samples in [-1, 1]
    /// (resampled with libsoxr, as the pipeline does).
    static func piperSpeech(_ text: String) async throws -> [Float] {
        let voice = try piperVoice()
        let resampler = try SoxrResampler(from: voice.sampleRate, to: 16_000)
        var samples: [Float] = []
        for try await chunk in voice.synthesize(text, options: SpeechOptions()) {
            samples += resampler.process(chunk.map { Float($0) / 32768 })
        }
        return samples + resampler.flush()
    }

    /// Synthesises `text` with flite and returns 16 kHz Float samples in [-1, 1].
    static func speech(_ text: String, speed: Double = 1) async throws -> [Float] {
        var samples: [Float] = []
        for try await chunk in try FliteSpeechSynthesizer().synthesize(text, options: SpeechOptions(speed: speed)) {
            samples.append(contentsOf: chunk.map { Float($0) / 32768 })
        }
        return samples
    }
}
