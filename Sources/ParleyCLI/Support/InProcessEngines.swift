import Foundation
import ParleyCore
import ParleyLocal
import ParleyOpenAI
import ParleyServer

/// The engines in-process commands (`say`, `transcribe`, `talk`, `chat`) run on, chosen from
/// the same `PARLEY_*` settings as `parley serve`: an OpenAI-compatible service where one is
/// configured, the embedded engine otherwise.
struct InProcessEngines: Sendable {
    /// The settings the engines come from.
    let settings: ServerSettings
    /// Where the embedded models are.
    let locator: ModelLocator

    /// Reads and checks the settings in `context`'s environment.
    /// - Throws: `CommandFailure` with the first problem found.
    init(_ context: CommandContext) throws {
        let (settings, problems) = ServerSettings.load(environment: context.environment)
        if let first = problems.first {
            throw CommandFailure(problems.count == 1 ? first : "\(first) (and \(problems.count - 1) more problems)")
        }
        self.settings = settings
        locator = ModelLocator(environment: context.environment)
    }

    /// The speech recognizer.
    func recognizer() throws -> any SpeechRecognizer {
        switch settings.speechRecognition {
        case .remote(let baseURL, let apiKey, let model):
            return OpenAISpeechRecognizer(configuration: OpenAIConfiguration(baseURL: baseURL, apiKey: apiKey, model: model))
        case .embedded:
            do {
                return try WhisperSpeechRecognizer(modelPath: locator.path(of: .whisperTinyEnglish))
            } catch {
                throw CommandFailure("speech-to-text (whisper.cpp): \(error)")
            }
        }
    }

    /// The speech synthesizer.
    /// - Parameter voice: a voice asked for by name, checked against flite's voices.
    func synthesizer(voice: String? = nil) throws -> any SpeechSynthesizer {
        switch settings.speechSynthesis {
        case .remote(let baseURL, let apiKey, let model):
            return OpenAISpeechSynthesizer(
                configuration: OpenAIConfiguration(baseURL: baseURL, apiKey: apiKey, model: model),
                defaultVoice: settings.voice ?? "alloy"
            )
        case .embedded:
            if let voice, !FliteSpeechSynthesizer.voices.contains(voice) {
                throw CommandFailure("flite has no voice '\(voice)' (voices: \(FliteSpeechSynthesizer.voices.joined(separator: ", ")))")
            }
            do {
                return try FliteSpeechSynthesizer()
            } catch {
                throw CommandFailure("text-to-speech (flite): \(ParleyCommandLine.describe(error))")
            }
        }
    }

    /// The language model, and what stops it when the command is done.
    func languageModel() async throws -> (model: any LanguageModel, stop: @Sendable () async -> Void) {
        switch settings.languageModel {
        case .remote(let baseURL, let apiKey, let model):
            return (OpenAILanguageModel(configuration: OpenAIConfiguration(baseURL: baseURL, apiKey: apiKey, model: model)), {})
        case .embedded:
            throw Self.embeddedUnavailable("language model (llama.cpp)", setting: "PARLEY_LLM_URL")
        }
    }

    /// The language model's description for people, e.g. `gpt-4o-mini at https://api.openai.com/v1`.
    var languageModelDescription: String {
        switch settings.languageModel {
        case .remote(let baseURL, _, let model): "\(model) at \(baseURL.absoluteString)"
        case .embedded: "the embedded language model"
        }
    }

    private static func embeddedUnavailable(_ engine: String, setting: String) -> CommandFailure {
        CommandFailure("the embedded \(engine) is not in this build yet; set \(setting) to an OpenAI-compatible service")
    }
}
