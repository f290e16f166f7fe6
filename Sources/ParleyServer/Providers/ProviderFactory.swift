import Foundation
import ParleyCore
import ParleyLocal
import ParleyOpenAI

/// Makes providers from settings: the embedded offline stack for whatever is not configured,
/// OpenAI-compatible services for what is. The server and the CLI's in-process commands use
/// the same choices.
public enum ProviderFactory {
    /// A provider that could not start, named with what to do about it.
    public struct StartupError: Error, CustomStringConvertible {
        public var description: String
    }

    /// A language model and what stops it (the supervised llama-server, when embedded).
    public struct StartedLanguageModel: Sendable {
        public var model: any LanguageModel
        /// Makes the model of one conversation (the embedded server keeps its history cached).
        public var makeConversationModel: @Sendable () -> any LanguageModel
        public var summary: ProviderComponent
        /// What the web page should say about it, if anything.
        public var notice: String?
        public var restartCount: @Sendable () -> Int
        public var stop: @Sendable () async -> Void
        /// Reads pauses' transcripts for `semantic_vad`: the bundled SmolLM2 only (the
        /// judge's threshold is its own).
        public var turnCompletionJudge: (any TurnCompletionJudge)?
    }

    /// Starts every provider of the server.
    /// - Throws: `StartupError` naming the provider that cannot start and why.
    public static func make(_ settings: ServerSettings) async throws -> ProviderSet {
        let recognizer = try self.recognizer(settings)
        let synthesizer = try voice(settings)
        let languageModel = try await self.languageModel(settings)
        let detector = voiceActivityDetector(settings)
        let turnCompletion = turnCompletionModel(settings)
        return ProviderSet(
            recognizer: recognizer.recognizer, languageModel: languageModel.model, synthesizer: synthesizer.synthesizer,
            makeVoiceActivityDetector: detector.make,
            makeResampler: resampler(from:to:),
            conversationLanguageModelFactory: languageModel.makeConversationModel,
            components: [recognizer.summary] + synthesizer.components + [languageModel.summary, detector.summary, turnCompletion.summary],
            notice: languageModel.notice,
            restartCount: languageModel.restartCount,
            shutdown: languageModel.stop,
            turnCompletionModel: turnCompletion.model,
            turnCompletionJudge: languageModel.turnCompletionJudge,
            makeNoiseSuppressor: { kind, frameLength, sampleRate in
                InputNoiseSuppression.make(kind: kind, frameLength: frameLength, sampleRate: sampleRate)
            },
            makeEchoCanceller: { frameLength, sampleRate in SpeexEchoCanceller(frameLength: frameLength, sampleRate: sampleRate) }
        )
    }

    /// The speech recognizer the settings choose. When the chosen Whisper model is not tiny.en
    /// and cannot load, tiny.en hears, a line on standard error says why and the component
    /// says so (`GET /v1/status`).
    public static func recognizer(
        _ settings: ServerSettings, warn: @Sendable (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }
    ) throws -> (recognizer: any SpeechRecognizer, summary: ProviderComponent) {
        switch settings.speechRecognition {
        case .embedded:
            let locator = locator(settings)
            var fallback: String?
            if settings.whisperModel != .tinyEnglish {
                let name = settings.whisperModel.rawValue
                do {
                    let recognizer = try WhisperSpeechRecognizer(modelPath: locator.path(of: settings.whisperModel.file))
                    return (recognizer, ProviderComponent(
                        role: "speech-to-text", name: "whisper.cpp \(name)", detail: "(in process)", languages: recognizer.languages
                    ))
                } catch {
                    warn("speech-to-text: Whisper \(name) could not load, hearing with tiny.en (English only) instead: \(error)")
                    fallback = "fallback: Whisper \(name) could not load"
                }
            }
            do {
                let recognizer = try WhisperSpeechRecognizer(modelPath: locator.path(of: .whisperTinyEnglish))
                let name = fallback.map { "whisper.cpp tiny.en (\($0))" } ?? "whisper.cpp tiny.en"
                return (recognizer, ProviderComponent(role: "speech-to-text", name: name, detail: "(in process)", languages: recognizer.languages))
            } catch {
                throw StartupError(description: "speech-to-text (whisper.cpp): \(error)")
            }
        case .remote(let baseURL, let apiKey, let model):
            let configuration = OpenAIConfiguration(baseURL: baseURL, apiKey: apiKey, model: model)
            return (OpenAISpeechRecognizer(configuration: configuration), ProviderComponent(role: "speech-to-text", name: model, detail: "at \(baseURL.absoluteString)"))
        }
    }

    /// The agent's voice in every language it speaks: the embedded voice (`synthesizer`) for
    /// its own language and espeak-ng's voices for the others (`MultilingualSpeechSynthesizer`),
    /// or the speech service, which speaks what its model speaks. Without espeak-ng the
    /// embedded voice speaks alone and a line on standard error says so.
    public static func voice(
        _ settings: ServerSettings, warn: @Sendable (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }
    ) throws -> (synthesizer: any SpeechSynthesizer, components: [ProviderComponent]) {
        let main = try synthesizer(settings, warn: warn)
        var summary = main.summary
        summary.languages = main.synthesizer.languages?.sorted()
        guard settings.speechSynthesis == .embedded else { return (main.synthesizer, [summary]) }
        do {
            let espeak = try EspeakSpeechSynthesizer()
            let others = ProviderComponent(
                role: "text-to-speech", name: "espeak-ng", detail: "(other languages; a child process per sentence)", languages: espeak.languages
            )
            return (MultilingualSpeechSynthesizer([main.synthesizer, espeak], makeResampler: resampler(from:to:)), [summary, others])
        } catch {
            warn("text-to-speech: espeak-ng cannot speak, so the agent answers every language with \(summary.name): \(error)")
            return (main.synthesizer, [summary])
        }
    }

    /// The speech synthesizer the settings choose. The embedded default is the Piper voice;
    /// when it cannot load, flite speaks, a line on standard error says why and the component
    /// says so (`GET /v1/status`).
    public static func synthesizer(
        _ settings: ServerSettings, warn: @Sendable (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }
    ) throws -> (synthesizer: any SpeechSynthesizer, summary: ProviderComponent) {
        switch settings.speechSynthesis {
        case .embedded:
            var fallback: String?
            if settings.embeddedVoice == .piper {
                do {
                    let locator = locator(settings)
                    let piper = try PiperSpeechSynthesizer(modelPath: locator.path(of: .piperJoe), onnxRuntimePath: locator.onnxRuntimeLibraryPath())
                    return (piper, ProviderComponent(role: "text-to-speech", name: "Piper en_US-joe-medium", detail: "(in process on onnxruntime; phonemes from espeak-ng)"))
                } catch {
                    warn("text-to-speech: the Piper voice could not load, speaking with flite instead: \(error)")
                    fallback = "\(error)"
                }
            }
            do {
                let flite = try FliteSpeechSynthesizer()
                guard let fallback else {
                    return (flite, ProviderComponent(role: "text-to-speech", name: "flite cmu_us_slt", detail: "(in process)"))
                }
                return (flite, ProviderComponent(
                    role: "text-to-speech", name: "flite cmu_us_slt (fallback: the Piper voice could not load)", detail: "(in process; \(fallback))"
                ))
            } catch {
                throw StartupError(description: "text-to-speech (flite): \(error)")
            }
        case .remote(let baseURL, let apiKey, let model):
            let configuration = OpenAIConfiguration(baseURL: baseURL, apiKey: apiKey, model: model)
            return (
                OpenAISpeechSynthesizer(configuration: configuration, defaultVoice: settings.voice ?? "alloy"),
                ProviderComponent(role: "text-to-speech", name: model, detail: "at \(baseURL.absoluteString)")
            )
        }
    }

    /// The language model the settings choose, started.
    public static func languageModel(_ settings: ServerSettings) async throws -> StartedLanguageModel {
        switch settings.languageModel {
        case .embedded:
            do {
                // The user's own GGUF (--llm-model), else the bundled SmolLM2, a tiny demo model.
                let ownModel = settings.localLanguageModelPath
                var configuration: LocalLLMServer.Configuration = try ownModel.map { try .gguf(path: $0, locator: locator(settings)) } ?? .smolLM2(locator: locator(settings))
                if ownModel == nil { configuration.addTurnCompletionJudgeSlot() }
                let server = try LocalLLMServer(configuration: configuration)
                try await server.start()
                let judge = ownModel == nil ? server.turnCompletionJudge() : nil
                let name = try ownModel.map { (try GGUFMetadata(path: $0)).name ?? URL(fileURLWithPath: $0).lastPathComponent }
                    ?? "SmolLM2-135M-Instruct"
                let openAI = OpenAIConfiguration(baseURL: server.baseURL, model: ownModel == nil ? "smollm2-135m-instruct" : name)
                return StartedLanguageModel(
                    model: OpenAILanguageModel(configuration: openAI),
                    makeConversationModel: { server.conversationModel(configuration: openAI) },
                    summary: ProviderComponent(role: "language model", name: name, detail: "on llama-server (supervised child process)"),
                    notice: ownModel == nil
                        ? "SmolLM2-135M is a tiny demo model: run parley serve --llm-model PATH.gguf or set PARLEY_LLM_URL for real answers."
                        : nil,
                    restartCount: { server.restartCount },
                    stop: { await server.stop() },
                    turnCompletionJudge: judge
                )
            } catch {
                throw StartupError(description: "language model (llama-server): \(error)")
            }
        case .remote(let baseURL, let apiKey, let model):
            let remote = OpenAILanguageModel(configuration: OpenAIConfiguration(baseURL: baseURL, apiKey: apiKey, model: model))
            return StartedLanguageModel(
                model: remote,
                makeConversationModel: { remote },
                summary: ProviderComponent(role: "language model", name: model, detail: "at \(baseURL.absoluteString)"),
                restartCount: { 0 }, stop: {}
            )
        }
    }

    /// The voice activity detector each session gets: Silero when its model loads, else energy.
    /// The model behind `semantic_vad`: Smart Turn v3.2 when setup installed it; without it,
    /// sessions asking for `semantic_vad` are refused with an error naming the field.
    public static func turnCompletionModel(_ settings: ServerSettings) -> (model: (any TurnCompletionModel)?, summary: ProviderComponent) {
        guard let path = try? locator(settings).path(of: .smartTurn), let model = try? SmartTurnModel(modelPath: path) else {
            return (nil, ProviderComponent(role: "semantic_vad", name: "unavailable", detail: "(no Smart Turn model; run scripts/setup)"))
        }
        return (model, ProviderComponent(role: "semantic_vad", name: "Smart Turn v3.2", detail: "(native, one shared network)"))
    }

    public static func voiceActivityDetector(_ settings: ServerSettings) -> (make: @Sendable () -> any VoiceActivityDetector, summary: ProviderComponent) {
        if settings.voiceActivityDetector == "silero", let path = try? locator(settings).path(of: .sileroVAD),
           let network = try? SileroNetwork.shared(modelPath: path) {
            return ({ SileroVAD(network: network) }, ProviderComponent(role: "voice activity", name: "Silero VAD v6.2", detail: "(one shared network)"))
        }
        return ({ EnergyVAD() }, ProviderComponent(role: "voice activity", name: "energy VAD", detail: "(adaptive noise floor)"))
    }

    /// A high-quality streaming resampler (libsoxr), or linear interpolation if soxr refuses.
    public static func resampler(from inputRate: Int, to outputRate: Int) -> any Resampler {
        if let soxr = try? SoxrResampler(from: inputRate, to: outputRate) { return soxr }
        // Both rates are clamped to be positive, the only thing LinearResampler checks.
        return try! LinearResampler(from: max(inputRate, 1), to: max(outputRate, 1))
    }

    private static func locator(_ settings: ServerSettings) -> ModelLocator {
        var environment = ProcessInfo.processInfo.environment
        if let directory = settings.modelDirectory { environment["PARLEY_MODEL_DIR"] = directory.path }
        return ModelLocator(environment: environment)
    }
}
