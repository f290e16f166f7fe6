import Foundation
import ParleyCore
import ParleyLocal
import ParleyServer
import ParleyTesting

/// A real Parley server on a free loopback port, with scripted providers, for the CLI's
/// `--url` modes.
struct CLITestServer {
    /// The server secret.
    static let secret = "cli-test-server-secret-0123456789"

    let app: ParleyApp
    let dataDirectory: TemporaryDirectory
    /// What the sessions hear.
    let recognizer: ScriptedSpeechRecognizer

    /// The base URL, e.g. `http://127.0.0.1:41234`.
    var url: String { "http://127.0.0.1:\(app.port)" }
    /// The environment a CLI run needs to talk to this server.
    var environment: [String: String] { ["PARLEY_SERVER_SECRET": Self.secret, "PARLEY_URL": url] }

    /// Starts a server whose sessions run on `languageModel`, hear `heard` (or whatever
    /// `hearing` makes of the audio, when given) and speak with a scripted synthesizer at 24 kHz.
    /// The energy VAD detects speech, or with `sileroVAD` the Silero model `parley serve` uses.
    static func start(
        languageModel: any LanguageModel = ScriptedLanguageModel(replies: [], fallback: .text("Hello from Parley.")),
        heard: [String] = [], hearing: (any SpeechRecognizer)? = nil, sileroVAD: Bool = false
    ) throws -> CLITestServer {
        let directory = try TemporaryDirectory()
        var settings = ServerSettings()
        settings.port = 0
        settings.dataDirectory = directory.url
        let recognizer = ScriptedSpeechRecognizer(texts: heard)
        let silero = sileroVAD ? try SileroVAD(modelPath: ModelLocator().path(of: .sileroVAD)) : nil
        let providers = ProviderSet(
            recognizer: hearing ?? recognizer, languageModel: languageModel,
            synthesizer: ScriptedSpeechSynthesizer(millisecondsPerWord: 100),
            makeVoiceActivityDetector: { () -> any VoiceActivityDetector in
                if let silero { silero } else { EnergyVAD() }
            },
            makeResampler: { from, to in try! LinearResampler(from: from, to: to) }
        )
        let server = CLITestServer(
            app: try ParleyApp(settings: settings, secret: secret, providers: providers, log: .silent),
            dataDirectory: directory, recognizer: recognizer
        )
        try server.app.start()
        return server
    }

    /// Stops the server and removes its data.
    func stop() async {
        await app.shutdown()
        dataDirectory.remove()
    }
}
