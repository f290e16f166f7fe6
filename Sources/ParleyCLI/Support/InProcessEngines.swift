import Foundation
import ParleyCore
import ParleyLocal
import ParleyServer

/// The engines in-process commands (`say`, `transcribe`, `talk`, `chat`) run on, chosen by
/// `ProviderFactory` from the same `PARLEY_*` settings as `parley serve`: an OpenAI-compatible
/// service where one is configured, the embedded engine otherwise.
struct InProcessEngines: Sendable {
    /// The settings the engines come from.
    let settings: ServerSettings

    /// Reads and checks the settings in `context`'s environment.
    /// - Throws: `CommandFailure` with the first problem found.
    init(_ context: CommandContext) throws {
        let (settings, problems) = ServerSettings.load(environment: context.environment)
        if let first = problems.first {
            throw CommandFailure(problems.count == 1 ? first : "\(first) (and \(problems.count - 1) more problems)")
        }
        self.settings = settings
    }

    /// The speech recognizer.
    func recognizer() throws -> any SpeechRecognizer {
        try Self.failing { try ProviderFactory.recognizer(settings).recognizer }
    }

    /// The speech synthesizer.
    /// - Parameter voice: a voice asked for by name, checked against the embedded voice's.
    func synthesizer(voice: String? = nil) throws -> any SpeechSynthesizer {
        if case .embedded = settings.speechSynthesis, let voice {
            let (engine, voices) = settings.embeddedVoice == .piper
                ? ("the Piper voice", PiperSpeechSynthesizer.voices) : ("flite", FliteSpeechSynthesizer.voices)
            guard voices.contains(voice) else {
                throw CommandFailure("\(engine) has no voice '\(voice)' (voices: \(voices.joined(separator: ", ")))")
            }
        }
        return try Self.failing { try ProviderFactory.voice(settings).synthesizer }
    }

    /// The language model, and what stops it when the command is done.
    func languageModel() async throws -> (model: any LanguageModel, stop: @Sendable () async -> Void) {
        do {
            let started = try await ProviderFactory.languageModel(settings)
            return (started.model, started.stop)
        } catch {
            throw CommandFailure("\(error)")
        }
    }

    /// The language model's description for people, e.g. `gpt-4o-mini at https://api.openai.com/v1`.
    var languageModelDescription: String {
        switch settings.languageModel {
        case .remote(let baseURL, _, let model): "\(model) at \(baseURL.absoluteString)"
        case .embedded: "the embedded language model"
        }
    }

    /// Runs `make`, turning a provider start-up error into a one-line command failure.
    private static func failing<T>(_ make: () throws -> T) throws -> T {
        do {
            return try make()
        } catch {
            throw CommandFailure("\(error)")
        }
    }
}
