import Foundation
import ParleyCore
import ParleyNet
import ParleyOpenAI
import ParleyServer
import Testing

/// The server secret, the upstream API keys, an agent's own API key, webhook header values, the
/// metrics token and minted client tokens never appear in a response, an error event or a log line — scanned
/// over a run full of failures that tempt the server to quote them.
@Suite("Security: secrets never leak")
struct SecuritySecretLeakTests {
    static let serverSecret = "parley-secret-LEAK-9f3b2c71d0e8"
    static let upstreamKey = "sk-upstream-LEAK-5c8d1e2f3a4b"
    static let agentKey = "sk-agent-LEAK-0a1b2c3d4e5f"
    static let webhookSecret = "whsec-LEAK-77aa88bb99cc"
    static let metricsToken = "scrape-LEAK-4d5e6f7a8b9c"

    /// Everything a run sent to clients and wrote to its log.
    final class Transcript: @unchecked Sendable {  // `lock` guards `texts`.
        private let lock = NSLock()
        private var texts: [String] = []
        func add(_ text: String) { lock.withLock { texts.append(text) } }
        var all: [String] { lock.withLock { texts } }
    }

    @Test("no secret in any response, error event or log line")
    func secretsStayInside() async throws {
        let upstreams = try FaultyUpstreams()
        defer { upstreams.stop() }
        let logLines = Transcript()
        let seen = Transcript()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-leak-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var settings = ServerSettings()
        settings.port = 0
        settings.dataDirectory = directory
        settings.metricsToken = Self.metricsToken
        let timeouts = OpenAITimeouts(firstOutput: .seconds(2), idle: .seconds(1))
        let app = try ParleyApp(
            settings: settings, secret: Self.serverSecret,
            providers: upstreams.providers(key: Self.upstreamKey, timeouts: timeouts, retry: .none),
            log: EventLog { logLines.add($0) }
        )
        try app.start()
        let server = TestServer(app: app, dataDirectory: directory)
        let base = "http://127.0.0.1:\(app.port)"

        func call(_ method: String, _ path: String, _ body: String? = nil, auth: String? = SecuritySecretLeakTests.serverSecret) async throws -> JSONValue {
            var headers = ["Content-Type": "application/json"]
            if let auth { headers["Authorization"] = "Bearer \(auth)" }
            let response = try await HTTPClient.shared.send(HTTPClient.Request(
                url: URL(string: base + path)!, method: method, headers: headers, body: body.map { Data($0.utf8) }
            ))
            seen.add(response.headers.map { "\($0.key): \($0.value)" }.joined(separator: "\n"))
            seen.add(String(decoding: response.body, as: UTF8.self))
            return (try? JSONDecoder().decode(JSONValue.self, from: response.body)) ?? .null
        }

        // REST: good and bad credentials, an agent holding its own key and a webhook secret.
        let minted = try await call("POST", "/v1/tokens", #"{"user":"ada"}"#)["token"]?.stringValue ?? ""
        let clientSecret = try await call("POST", "/v1/realtime/client_secrets", "{}")["value"]?.stringValue ?? ""
        _ = try await call("GET", "/v1/agents", auth: Self.serverSecret + "x")
        _ = try await call("GET", "/v1/agents", auth: minted)
        _ = try await call("POST", "/v1/tokens", "{", auth: Self.serverSecret)
        let agent = try await call("POST", "/v1/agents", #"""
            {"name":"Keyed","llm":{"base_url":"\#(upstreams.languageModel.baseURL)","model":"m","api_key":"\#(Self.agentKey)"},
             "tools":[{"type":"webhook","name":"lookup","url":"http://127.0.0.1:9/hook","headers":{"Authorization":"Bearer \#(Self.webhookSecret)"}}]}
            """#)
        let agentID = try #require(agent["id"]?.stringValue)
        _ = try await call("GET", "/v1/agents/\(agentID)")
        _ = try await call("GET", "/v1/agents")
        _ = try await call("PATCH", "/v1/agents/\(agentID)", #"{"name":"Keyed 2"}"#)
        let instance = try await call("POST", "/v1/agents/\(agentID)/instances", #"{"user":"ada"}"#)
        _ = try await call("GET", "/v1/instances/\(instance["id"]?.stringValue ?? "")")
        _ = try await call("GET", "/metrics")
        _ = try await call("GET", "/metrics", auth: Self.metricsToken)
        _ = try await call("GET", "/metrics", auth: Self.metricsToken + "x")
        _ = try await call("GET", "/metrics", auth: nil)
        _ = try await call("GET", "/healthz")
        _ = try await call("GET", "/nowhere")

        // Realtime: every provider failing with an upstream that quotes the key it was sent.
        for upstream in upstreams.all { try upstream.set(.unauthorized) }
        let session = try await RealtimeTestClient.connect(server, token: minted)
        #expect(await session.next("session.created") != nil)
        try session.send(#"{"type":"session.update","session":{"type":"realtime","audio":{"input":{"turn_detection":null}}}}"#)
        try session.send(#"{"type":"input_audio_buffer.append","audio":"\#(FaultTurn.utterance)"}"#)
        try session.send(#"{"type":"input_audio_buffer.commit"}"#)
        #expect(await session.next("conversation.item.input_audio_transcription.failed") != nil)
        try FaultTurn.start(.languageModel, client: session)
        #expect(await session.next("response.done") != nil)
        try upstreams.languageModel.set(.healthy)
        try FaultTurn.start(.speech, client: session)
        #expect(await session.next("response.done") != nil)
        try session.send(#"{"type":"no.such.event","secret":"\#(Self.serverSecret)"}"#)
        #expect(await session.next("error") != nil)
        // The agent's own model, with the agent's key.
        try upstreams.languageModel.set(.unauthorized)
        let agentSession = try await RealtimeTestClient.connect(server, token: clientSecret, query: "?agent=\(agentID)")
        try FaultTurn.start(.languageModel, client: agentSession)
        let agentFailure = await agentSession.next("response.done")
        #expect(agentFailure?["response"]?["status"]?.stringValue == "failed")
        for client in [session, agentSession] {
            for event in await client.events { seen.add(event.jsonText) }
            client.socket.close(code: 1000, reason: "done")
        }
        await app.shutdown()

        // The upstreams did get the keys (so the scan below is looking for something real).
        #expect(upstreams.languageModel.receivedAuthorizations.contains("Bearer \(Self.agentKey)"))
        #expect(upstreams.speech.receivedAuthorizations.contains("Bearer \(Self.upstreamKey)"))
        #expect(seen.all.contains { $0.contains("Incorrect API key provided") }, "the upstream's message reached the client (redacted)")
        #expect(logLines.all.contains { $0.contains("session.started") } && logLines.all.contains { $0.contains("response.done") })

        let secrets = [Self.serverSecret, Self.upstreamKey, Self.agentKey, Self.webhookSecret, Self.metricsToken]
        for secret in secrets {
            #expect(!seen.all.contains { $0.contains(secret) }, "\(secret) reached a client")
            #expect(!logLines.all.contains { $0.contains(secret) }, "\(secret) reached the log")
        }
        for token in [minted, clientSecret] where !token.isEmpty {
            #expect(!logLines.all.contains { $0.contains(token) }, "a client token reached the log")
        }
        #expect(!logLines.all.contains { $0.contains(FaultTurn.utterance.prefix(64)) }, "audio reached the log")
        print("secret-scan\t\(seen.all.count) responses and events\t\(logLines.all.count) log lines\t\(secrets.count + 2) secrets\t0 found")
    }
}
