import Foundation
import Observation
import ParleySync
import ParleyClient
import ParleyCore
import ParleyServer
import ParleyTesting
import Testing

/// A real Parley server on a loopback port with fast, deterministic providers.
struct ClientTestServer {
    static let secret = "client-test-secret-0123456789"
    let app: ParleyApp

    var port: Int { app.port }
    var realtimeURL: URL { URL(string: "ws://127.0.0.1:\(port)/v1/realtime?parley_events=true")! }
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Starts a server on `port` (0: a free one) hearing what `recognizer` hears.
    static func start(
        port: Int = 0, recognizer: any SpeechRecognizer = FixedSpeechRecognizer(), configure: (inout ServerSettings) -> Void = { _ in }
    ) throws -> ClientTestServer {
        var settings = ServerSettings()
        settings.port = port
        settings.dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-client-\(UUID().uuidString)")
        configure(&settings)
        let providers = ProviderSet(
            recognizer: recognizer, languageModel: KeywordLanguageModel(),
            synthesizer: ScriptedSpeechSynthesizer(millisecondsPerWord: 100),
            makeVoiceActivityDetector: { EnergyVAD() },
            makeResampler: { from, to in try! LinearResampler(from: from, to: to) }
        )
        let server = ClientTestServer(app: try ParleyApp(settings: settings, secret: secret, providers: providers, log: .silent))
        try server.app.start()
        return server
    }

    /// A valid client token, good for ten minutes.
    static func token() -> RealtimeToken {
        let minted = ClientTokenAuthority(secret: secret).mint(subject: "client-tester")
        return RealtimeToken(value: minted.token, expiresAt: Date(timeIntervalSince1970: TimeInterval(minted.claims.expiresAt)))
    }

    func stop() async { await app.shutdown() }
}

/// Counts the tokens a test's token provider handed out, and can hand out bad ones first.
final class TokenDispenser: Sendable {
    private let state: Locked<(calls: Int, badTokensLeft: Int)>

    init(badTokensFirst: Int = 0) {
        state = Locked((0, badTokensFirst))
    }

    var calls: Int { state.withLock { $0.calls } }

    @Sendable func next() async throws -> RealtimeToken {
        let bad = state.withLock { state -> Bool in
            state.calls += 1
            guard state.badTokensLeft > 0 else { return false }
            state.badTokensLeft -= 1
            return true
        }
        return bad ? RealtimeToken(value: "forged.token", expiresAt: Date().addingTimeInterval(600)) : ClientTestServer.token()
    }
}

/// A model on a fake microphone and speaker, talking to `server` with short reconnect waits.
@MainActor
func makeModel(_ server: ClientTestServer, audio: FakeConversationAudio, tokens: TokenDispenser = TokenDispenser()) -> ConversationModel {
    let configuration = RealtimeClient.Configuration(
        url: server.realtimeURL, backoff: ReconnectBackoff(steps: [.milliseconds(50), .milliseconds(100), .milliseconds(200)]),
        sessionStartTimeout: .seconds(10)
    )
    return ConversationModel(client: RealtimeClient(configuration: configuration, token: tokens.next), audio: audio)
}

/// A model with fake audio on a fresh test server, connected and ready.
@MainActor
func connectedModel() async throws -> (server: ClientTestServer, audio: FakeConversationAudio, model: ConversationModel) {
    let server = try ClientTestServer.start()
    let audio = FakeConversationAudio()
    let model = makeModel(server, audio: audio)
    model.connect()
    try #require(await waitUntil("connected") { model.status == .ready })
    return (server, audio, model)
}

/// Waits until `condition` holds, re-checking whenever the observable state it reads changes;
/// records an issue and returns `false` at the deadline.
@MainActor
@discardableResult
func waitUntil(
    _ description: String, timeout: Duration = .seconds(30), sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: @escaping @MainActor () -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now + TestDeadline.scaled(timeout)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("Timed out waiting until \(description)", sourceLocation: sourceLocation)
            return false
        }
        let (changes, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        withObservationTracking { _ = condition() } onChange: { continuation.yield() }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for await _ in changes { return } }
            group.addTask { try? await Task.sleep(until: deadline) }
            await group.next()
            group.cancelAll()
        }
        continuation.finish()
    }
    return true
}

/// Runs `operation` (which must end when cancelled) with a deadline; records an issue and
/// returns `false` when the deadline passes first.
@discardableResult
func within(
    _ description: String, timeout: Duration = .seconds(30), sourceLocation: SourceLocation = #_sourceLocation,
    _ operation: @escaping @Sendable () async -> Void
) async -> Bool {
    let finished = await withTaskGroup(of: Bool.self) { group in
        group.addTask {
            await operation()
            return !Task.isCancelled
        }
        group.addTask {
            try? await Task.sleep(for: TestDeadline.scaled(timeout))
            return false
        }
        let first = await group.next() ?? false
        group.cancelAll()
        return first
    }
    if !finished { Issue.record("Timed out waiting until \(description)", sourceLocation: sourceLocation) }
    return finished
}
