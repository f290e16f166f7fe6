import Foundation
import ParleyCore
import ParleyNet
import ParleyOpenAI
import ParleyServer
import ParleyTesting
import Testing

/// Limits that hold per user, per token and per session, against a real server.
@Suite("Security: limits per user, token and session")
struct SecurityLimitsTests {
    /// Opens a realtime session with `token` and waits until the server created it.
    static func openSession(_ server: TestServer, token: String) async throws -> RealtimeTestClient {
        let client = try await RealtimeTestClient.connect(server, token: token)
        #expect(await client.next("session.created") != nil)
        return client
    }

    /// Asks for a WebRTC call with `token` (a minimal offer: the door decides before the media).
    static func requestCall(_ server: TestServer, token: String) async throws -> (status: Int, body: JSONValue) {
        let response = try await HTTPClient.shared.send(HTTPClient.Request(
            url: server.baseURL.appendingPathComponent("/v1/realtime/calls"), method: "POST",
            headers: ["Authorization": "Bearer \(token)", "Content-Type": "application/sdp"], body: Data("v=0\r\n".utf8)
        ))
        return (response.status, (try? JSONDecoder().decode(JSONValue.self, from: response.body)) ?? .null)
    }

    @Test("one user's sessions are capped across tokens and doors; another user and the backend are not held back")
    func oneUsersSessionsAreCappedOnEveryDoor() async throws {
        let server = try TestServer.start {
            $0.maximumSessionsPerUser = 2
            $0.maximumSessionsPerToken = 1
        }
        let first = server.clientToken(user: "alice")
        let aliceSessions = [try await Self.openSession(server, token: first), try await Self.openSession(server, token: server.clientToken(user: "alice"))]

        // A second session on the first token: the token's limit, before the upgrade.
        await #expect(throws: (any Error).self) { _ = try await RealtimeTestClient.connect(server, token: first) }
        // A third token of alice's: her limit, on the WebSocket and on the WebRTC door.
        let third = server.clientToken(user: "alice")
        await #expect(throws: (any Error).self) { _ = try await RealtimeTestClient.connect(server, token: third) }
        let call = try await Self.requestCall(server, token: third)
        #expect(call.status == 429, "\(call.body)")
        #expect(call.body["error"]?["code"]?.stringValue == "too_many_sessions_for_user")
        #expect(call.body["error"]?["message"]?.stringValue?.contains("already has 2 sessions open") == true)

        // Others are not held back by alice.
        let bob = try await Self.openSession(server, token: server.clientToken(user: "bob"))
        let backend = try await Self.openSession(server, token: server.secret)

        // When alice ends a session, she may open another.
        aliceSessions[0].socket.close(code: 1000, reason: "done")
        let reopened = await ResourceProbe.eventually(within: 10) { server.app.context.sessions.count == 3 }
        #expect(reopened)
        let again = try await Self.openSession(server, token: third)
        for client in [aliceSessions[1], bob, backend, again] { client.socket.close(code: 1000, reason: "done") }
        await server.stop()
    }

    @Test("a session that reaches its maximum length ends with session_expired, and the server goes on")
    func sessionsEndAtTheirMaximumLength() async throws {
        let server = try TestServer.start { $0.maximumSessionLength = .milliseconds(600) }
        let client = try await Self.openSession(server, token: server.clientToken(user: "ada"))
        let expired = await client.next("error", seconds: 20)
        #expect(expired?["error"]?["code"]?.stringValue == "session_expired")
        #expect(expired?["error"]?["message"]?.stringValue?.hasPrefix("Your session hit the maximum duration of") == true)
        #expect(await client.closes(within: 10))
        #expect(await ResourceProbe.eventually(within: 10) { server.app.context.sessions.count == 0 })
        let next = try await Self.openSession(server, token: server.clientToken(user: "ada"))
        next.socket.close(code: 1000, reason: "done")
        await server.stop()
    }

    /// Asserts that `client` was told `rate_limit_exceeded` and closed, and that `bystander`
    /// still gets an answer.
    static func expectClosedForFlooding(_ client: RealtimeTestClient, bystander: RealtimeTestClient) async throws {
        let error = await client.next("error", seconds: 30)
        #expect(error?["error"]?["code"]?.stringValue == "rate_limit_exceeded", "\(String(describing: error))")
        #expect(await client.closes(within: 10))
        try await expectBystanderAnswered(bystander)
    }

    /// Asserts that `bystander` still gets an answer.
    static func expectBystanderAnswered(_ bystander: RealtimeTestClient) async throws {
        try bystander.send(#"{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"still there?"}]}}"#)
        try bystander.send(#"{"type":"response.create"}"#)
        #expect(await bystander.next("response.done", seconds: 30)?["response"]?["status"]?.stringValue == "completed")
    }

    @Test("an event flood ends that session, and only that one, while another keeps talking")
    func anEventFloodEndsOnlyThatSession() async throws {
        let logged = LoggedEvents()
        let server = try TestServer.start(log: logged.log)
        let bystander = try await Self.openSession(server, token: server.clientToken(user: "bob"))
        let flooder = try await Self.openSession(server, token: server.clientToken(user: "mallory"))
        // The budget allows 2,000 events plus 400 a second of the session's age, counted as the
        // server reads them: 30,000 run it out even on a server that reads only 500 a second
        // (a crowded machine), where 6,000 would fit within the age it reaches reading them.
        for _ in 0..<30_000 {
            guard (try? flooder.send(#"{"type":"input_audio_buffer.clear"}"#)) != nil else { break }
        }
        #expect(await logged.first("session.rate_limited", within: 30) != nil, "the server never cut the flood off")
        // The error event reaches a client that reads its replies (the audio test below checks
        // it); this one is busy sending, and either side may drop the connection for a queue
        // that overflows (the server's thousands of acknowledgements, or the client's flood)
        // before the error is out. Whatever it did receive names the cause.
        #expect(await flooder.closes(within: 10))
        let errorCodes = await flooder.events.filter { $0["type"]?.stringValue == "error" }.map { $0["error"]?["code"]?.stringValue }
        #expect(errorCodes.allSatisfy { $0 == "rate_limit_exceeded" }, "\(errorCodes)")
        try await Self.expectBystanderAnswered(bystander)
        bystander.socket.close(code: 1000, reason: "done")
        await server.stop()
    }

    @Test("audio at ten times real time ends that session with an error while another keeps talking")
    func audioFasterThanRealTimeEndsOnlyThatSession() async throws {
        let server = try TestServer.start()
        let bystander = try await Self.openSession(server, token: server.clientToken(user: "bob"))
        let streamer = try await Self.openSession(server, token: server.clientToken(user: "mallory"))
        // 100 ms of quiet audio every 10 ms: ten times real time, for up to 20 s.
        let chunk = PCM16Buffer(format: .realtime, samples: [Int16](repeating: 3, count: 2_400)).base64EncodedString()
        let start = ContinuousClock.now
        var sent = 0
        while ContinuousClock.now - start < .seconds(20), await !streamer.events.contains(where: { $0["type"]?.stringValue == "error" }) {
            guard (try? streamer.send(#"{"type":"input_audio_buffer.append","audio":"\#(chunk)"}"#)) != nil else { break }
            sent += 1
            try await Task.sleep(for: .milliseconds(10))  // the pace of the audio, not a wait for the server
        }
        #expect(sent < 1_900, "the server took \(sent) chunks of audio at ten times real time")
        try await Self.expectClosedForFlooding(streamer, bystander: bystander)
        bystander.socket.close(code: 1000, reason: "done")
        await server.stop()
    }

    @Test("max_output_tokens \"inf\" cannot pass the server's ceiling, and out-of-band responses in flight are capped")
    func outputTokensHaveACeilingAndOutOfBandResponsesACap() async throws {
        let upstream = try FakeOpenAIServer()
        upstream.setChatResponder { _ in
            var script = FakeChatScript.text(["One ", "two ", "three."])
            script.interChunkDelay = .milliseconds(400)
            return script
        }
        var providers = TestServer.testProviders()
        providers.languageModel = OpenAILanguageModel(configuration: OpenAIConfiguration(baseURL: upstream.baseURL, apiKey: "k", model: "fake"))
        let server = try TestServer.start(providers: providers) { $0.outputTokenCeiling = 300 }
        let client = try await Self.openSession(server, token: server.clientToken(user: "ada"))
        try client.send(#"{"type":"session.update","session":{"type":"realtime","max_output_tokens":"inf"}}"#)
        _ = await client.next("session.updated")
        try client.send(#"{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"Count."}]}}"#)
        try client.send(#"{"type":"response.create"}"#)
        _ = await client.next("response.done")
        let sent = upstream.requests.compactMap(\.json).last
        #expect(sent?["max_tokens"] == .number(300), "the model was asked for \(String(describing: sent?["max_tokens"]))")

        for _ in 0..<6 {
            try client.send(#"{"type":"response.create","response":{"conversation":"none","output_modalities":["text"],"max_output_tokens":100000}}"#)
        }
        let refused = await client.next("error")
        #expect(refused?["error"]?["code"]?.stringValue == "too_many_responses")
        await upstream.waitForRequests(5)  // the first response and the four out-of-band ones admitted
        let outOfBand = upstream.requests.compactMap(\.json).dropFirst()
        #expect(outOfBand.allSatisfy { $0["max_tokens"] == .number(300) })
        client.socket.close(code: 1000, reason: "done")
        await server.stop()
        await upstream.shutdown()
    }
}
