import Foundation
import ParleyCore
import ParleyLocal
import ParleyServer
import ParleyTesting

/// A real Parley server (`ParleyApp`, the realtime endpoint, on a port of its own on
/// loopback) with the embedded ears: Silero VAD, Smart Turn v3.2 for `semantic_vad`, speexdsp
/// noise reduction and echo cancellation, Whisper tiny.en, SmolLM2 on llama-server reading
/// pauses' transcripts (`LlamaTurnCompletionJudge`), and flite speaking the agent's replies. The agent's words are a scripted long reply (a language model would only add
/// time and vary the reply's length: what is measured here is the listening).
public final class TurnEvaluationServer: Sendable {
    /// The agent's reply to every response: about 9 s of flite speech, long enough for a clip
    /// played half a second into it to be over the agent.
    public static let reply = Array(repeating: "Here is a long answer that goes on for a while, with more detail than anyone needs.", count: 3)
        .joined(separator: " ")

    private let app: ParleyApp
    private let judgeServer: LocalLLMServer
    let secret = "parley-turn-evaluation-secret-0123456789"

    /// The realtime URL, asking for `parley.*` events.
    public var url: URL { URL(string: "ws://127.0.0.1:\(app.port)/v1/realtime?parley_events=true")! }

    /// Starts the server on a free port, hearing with `recognizerModel` (Whisper tiny.en unless told).
    /// - Throws: `LocalModelError` when a model is missing (run scripts/setup), or what starting fails with.
    public init(recognizerModel: ModelLocator.Model = .whisperTinyEnglish) async throws {
        let locator = ModelLocator()
        var judgeConfiguration = try LocalLLMServer.Configuration.smolLM2(locator: locator)
        (judgeConfiguration.parallelSlots, judgeConfiguration.contextSize) = (1, 512)
        judgeServer = try LocalLLMServer(configuration: judgeConfiguration)
        try await judgeServer.start()
        let network = try SileroNetwork.shared(modelPath: locator.path(of: .sileroVAD))
        let providers = ProviderSet(
            recognizer: try WhisperSpeechRecognizer(modelPath: locator.path(of: recognizerModel)),
            languageModel: ScriptedLanguageModel(replies: [], fallback: .text(Self.reply)),
            synthesizer: try FliteSpeechSynthesizer(),
            makeVoiceActivityDetector: { SileroVAD(network: network) },
            makeResampler: ProviderFactory.resampler,
            turnCompletionModel: try SmartTurnModel(modelPath: locator.path(of: .smartTurn)),
            turnCompletionJudge: judgeServer.turnCompletionJudge(),
            makeNoiseSuppressor: { kind, frameLength, sampleRate in
                // What the server ships (ProviderFactory): speexdsp behind the gate.
                InputNoiseSuppression.make(kind: kind, frameLength: frameLength, sampleRate: sampleRate)
            },
            makeEchoCanceller: { frameLength, sampleRate in SpeexEchoCanceller(frameLength: frameLength, sampleRate: sampleRate) }
        )
        var settings = ServerSettings()
        settings.port = 0
        settings.host = "127.0.0.1"
        settings.maximumSessions = 64
        settings.dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-turn-evaluation-\(getpid())-\(UUID().uuidString)")
        app = try ParleyApp(settings: settings, secret: secret, providers: providers)
        try app.start()
    }

    /// Opens a realtime session with `session` (the JSON of a `session.update`'s `session`).
    func openSession(_ session: String) async throws -> RealtimeTurnSession {
        try await RealtimeTurnSession(url: url, secret: secret, session: session)
    }

    /// Closes every session and stops the server.
    public func stop() async {
        await app.shutdown()
        await judgeServer.stop()
    }
}
