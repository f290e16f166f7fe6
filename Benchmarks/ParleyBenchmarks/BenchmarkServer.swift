import Foundation
import ParleyCore
import ParleyLocal
import ParleyOpenAI
import ParleyServer

/// `ParleyBenchmarks serve`: the Parley server (`ParleyApp`, the realtime endpoint and all) with
/// OpenAI-compatible speech recognition, language model and speech synthesis at one upstream
/// (the fake upstream), Silero or energy VAD and libsoxr resampling. Runs until killed.
enum BenchmarkServer {
    static let usage = """
    usage: ParleyBenchmarks serve --upstream URL [--vad energy|silero] [--host HOST] [--port N]
                                  [--secret TEXT] [--data-dir PATH] [--preemptive-transcription-ms N]
                                  [--preemptive-generation on|off]
                                  [--database-url postgresql://... [--cluster-max-sessions N]]

    Serves ws://HOST:PORT/v1/realtime with every provider at the OpenAI-compatible URL
    (for example http://127.0.0.1:9000/v1). Prints "listening on ws://HOST:PORT/v1/realtime".
    --vad silero needs the Silero model where scripts/setup puts it (PARLEY_MODEL_DIR).
    --preemptive-transcription-ms 0 transcribes a turn only once it has ended (default 30).
    --preemptive-generation off starts a reply only once its turn has ended (default on).
    --database-url runs the node in cluster mode on that PostgreSQL (store, claims, heartbeat);
    --cluster-max-sessions sets the cluster-wide session maximum every admission checks.
    """

    /// The secret the benchmarks authenticate with unless `--secret` names another.
    static let defaultSecret = "parley-benchmark-secret-0123456789"

    /// Parses `arguments` (after `serve`), starts the server and never returns unless it fails.
    static func run(arguments: [String]) async -> Int32 {
        var settings = ServerSettings()
        settings.port = 0
        settings.maximumSessions = 10_000
        settings.dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-bench-\(getpid())")
        var secret = defaultSecret
        var upstream: URL?
        var vad = "energy"
        var remaining = arguments[...]
        while let option = remaining.popFirst() {
            guard let value = remaining.popFirst() else { return fail("\(option) needs a value") }
            switch option {
            case "--upstream": upstream = URL(string: value)
            case "--host": settings.host = value
            case "--port":
                guard let port = Int(value), (0...65_535).contains(port) else { return fail("--port: \"\(value)\" is not a port") }
                settings.port = port
            case "--vad":
                guard ["energy", "silero"].contains(value) else { return fail("--vad: \"\(value)\" is not energy or silero") }
                vad = value
            case "--secret": secret = value
            case "--data-dir": settings.dataDirectory = URL(fileURLWithPath: value)
            case "--preemptive-transcription-ms":
                guard let delay = Int(value), (0...10_000).contains(delay) else { return fail("--preemptive-transcription-ms: \"\(value)\" is not 0 to 10000") }
                settings.preemptiveTranscriptionAfterMs = delay == 0 ? nil : delay
            case "--preemptive-generation":
                guard ["on", "off"].contains(value) else { return fail("--preemptive-generation: \"\(value)\" is not on or off") }
                settings.preemptiveGeneration = value == "on"
            case "--database-url": settings.databaseURL = value
            case "--cluster-max-sessions":
                guard let maximum = Int(value), maximum > 0 else { return fail("--cluster-max-sessions: \"\(value)\" is not a positive number") }
                settings.clusterMaximumSessions = maximum
            default: return fail("unknown option \(option)")
            }
        }
        guard let upstream, ["http", "https"].contains(upstream.scheme ?? "") else { return fail("--upstream needs an http(s) URL") }

        let app: ParleyApp
        do {
            let makeDetector = vad == "silero" ? try sileroDetectors() : energyDetectors
            app = try ParleyApp(settings: settings, secret: secret, providers: providers(upstream: upstream, makeVoiceActivityDetector: makeDetector))
            try app.start()
            try await app.joinCluster()
        } catch {
            return fail("cannot start: \(error)")
        }
        FileHandle.standardOutput.write(Data("listening on ws://\(settings.host):\(app.port)/v1/realtime\n".utf8))
        while true { try? await Task.sleep(for: .seconds(3_600)) }
    }

    /// Makes an energy VAD per session.
    static let energyDetectors: @Sendable () -> any VoiceActivityDetector = { EnergyVAD() }

    /// Makes a Silero VAD per session, all sharing one network loaded here.
    /// - Throws: `LocalModelError` when the model is missing or does not load.
    static func sileroDetectors() throws -> @Sendable () -> any VoiceActivityDetector {
        let network = try SileroNetwork.shared(modelPath: ModelLocator().path(of: .sileroVAD))
        return { SileroVAD(network: network) }
    }

    /// The engines: everything remote at `upstream`, no retries (a failure must show).
    static func providers(
        upstream: URL, makeVoiceActivityDetector: @escaping @Sendable () -> any VoiceActivityDetector = energyDetectors
    ) -> ProviderSet {
        func configuration(model: String) -> OpenAIConfiguration {
            OpenAIConfiguration(baseURL: upstream, apiKey: "benchmark", model: model, retry: .none)
        }
        return ProviderSet(
            recognizer: OpenAISpeechRecognizer(configuration: configuration(model: "whisper-1")),
            languageModel: OpenAILanguageModel(configuration: configuration(model: "fake-llm")),
            synthesizer: OpenAISpeechSynthesizer(configuration: configuration(model: "tts-1")),
            makeVoiceActivityDetector: makeVoiceActivityDetector,
            makeResampler: { from, to in resampler(from: from, to: to) },
            components: [ProviderComponent(role: "all providers", name: "OpenAI-compatible", detail: "at \(upstream.absoluteString)")]
        )
    }

    /// A libsoxr resampler, or the linear one for rates libsoxr refuses.
    static func resampler(from: Int, to: Int) -> any Resampler {
        if let soxr = try? SoxrResampler(from: from, to: to) { return soxr }
        // Both resamplers accept the same rates (8 to 192 kHz), which the session checks first.
        return try! LinearResampler(from: from, to: to)
    }

    private static func fail(_ message: String) -> Int32 {
        FileHandle.standardError.write(Data("ParleyBenchmarks serve: \(message)\n\(usage)\n".utf8))
        return 2
    }
}
