import Foundation
import ParleyCore
import ParleyNet
import ParleyServer
import Testing

/// Hostile input on the realtime socket: every case gets an error event (or a clean close),
/// the session and the server keep working, and nothing already committed is lost.
@Suite struct RealtimeHostileInputTests {
    static let sayHello = #"{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"Say hello"}]}}"#

    /// Asserts that a text turn still completes on `client`.
    func expectTextTurnWorks(_ client: RealtimeTestClient) async throws {
        try client.send(Self.sayHello)
        try client.send(#"{"type":"response.create"}"#)
        let done = await client.next("response.done")
        #expect(done?["response"]?["status"]?.stringValue == "completed")
    }

    @Test(arguments: [
        ("{not json", "invalid_json"),
        (#"{"type":"no.such.event"}"#, "unknown_event"),
        (#"{"event_id":"e1"}"#, "invalid_event"),
        (#"{"type":"input_audio_buffer.append","audio":"@@not base64@@"}"#, "invalid_value"),
        (#"{"type":"input_audio_buffer.append","audio":"AAAA"}"#, "invalid_value"),
        (#"{"type":"input_audio_buffer.append","audio":42}"#, "invalid_value"),
        (#"{"type":"session.update","session":{"type":"realtime","audio":{"input":{"format":{"type":"audio/pcm","rate":8000}}}}}"#, "unsupported_value"),
        (#"{"type":"conversation.item.truncate","item_id":"item_nope","content_index":0,"audio_end_ms":10}"#, "item_not_found"),
        (#"{"type":"conversation.item.delete","item_id":"item_nope"}"#, "item_not_found"),
        (#"{"type":"response.cancel"}"#, "response_cancel_not_active"),
        (#"{"type":"input_audio_buffer.commit","event_id":"evt_commit"}"#, "input_audio_buffer_commit_empty"),
    ])
    func badEventsGetAnErrorAndTheSessionGoesOn(event: String, code: String) async throws {
        let server = try TestServer.start()
        let client = try await RealtimeTestClient.connect(server)
        #expect(await client.next("session.created") != nil)
        try client.send(#"{"type":"session.update","session":{"type":"realtime","audio":{"input":{"turn_detection":null}}}}"#)
        #expect(await client.next("session.updated") != nil)
        try client.send(event)
        let error = await client.next("error")
        #expect(error?["error"]?["code"]?.stringValue == code, "\(error?.jsonText ?? "no error")")
        if event.contains("evt_commit") { #expect(error?["error"]?["event_id"]?.stringValue == "evt_commit") }
        try await expectTextTurnWorks(client)
        client.socket.close()
        await server.stop()
    }

    @Test func telephoneAudioThatIsNotBase64IsRefusedAndTheSessionGoesOn() async throws {
        let server = try TestServer.start()
        let client = try await RealtimeTestClient.connect(server)
        try client.send(#"{"type":"session.update","session":{"type":"realtime","audio":{"input":{"format":{"type":"audio/pcmu"},"turn_detection":null}}}}"#)
        #expect(await client.next("session.updated") != nil)
        try client.send(#"{"type":"input_audio_buffer.append","audio":"@@not base64@@"}"#)
        let error = await client.next("error")
        #expect(error?["error"]?["code"]?.stringValue == "invalid_value")
        #expect(error?["error"]?["message"]?.stringValue?.contains("G.711") == true, "\(error?.jsonText ?? "no error")")
        // An odd number of bytes is fine in G.711: one byte per sample.
        let chunk = Base64Codec.encode([UInt8](repeating: 0x2A, count: 1_601))
        try client.send(#"{"type":"input_audio_buffer.append","audio":"\#(chunk)"}"#)
        try client.send(#"{"type":"input_audio_buffer.commit"}"#)
        #expect(await client.next("input_audio_buffer.committed") != nil)
        try await expectTextTurnWorks(client)
        await server.stop()
    }

    @Test func binaryFramesAreRefusedWithAnError() async throws {
        let server = try TestServer.start()
        let client = try await RealtimeTestClient.connect(server)
        try client.socket.send(.binary(Data([0, 1, 2, 3])))
        #expect(await client.next("error")?["error"]?["code"]?.stringValue == "invalid_event")
        try await expectTextTurnWorks(client)
        await server.stop()
    }

    @Test func anOversizeMessageClosesOnlyThatSession() async throws {
        let server = try TestServer.start()
        let bystander = try await RealtimeTestClient.connect(server)
        let offender = try await RealtimeTestClient.connect(server)
        #expect(await offender.next("session.created") != nil)
        let huge = #"{"type":"input_audio_buffer.append","audio":""# + String(repeating: "A", count: 17 << 20) + #""}"#
        try offender.send(huge)
        await offender.socket.waitUntilClosed()
        #expect(offender.socket.closeCode == WebSocketCloseCode.messageTooBig)
        try await expectTextTurnWorks(bystander)
        await server.stop()
    }

    @Test func aThousandEventsInABurstAreAllProcessed() async throws {
        let server = try TestServer.start()
        let client = try await RealtimeTestClient.connect(server)
        try client.send(#"{"type":"session.update","session":{"type":"realtime","audio":{"input":{"turn_detection":null}}}}"#)
        #expect(await client.next("session.updated") != nil)
        let chunk = PCM16Buffer(samples: [Int16](repeating: 1200, count: 480)).base64EncodedString()
        for _ in 0..<1_000 { try client.send(#"{"type":"input_audio_buffer.append","audio":"\#(chunk)"}"#) }
        try client.send(#"{"type":"input_audio_buffer.commit"}"#)
        let transcript = await client.next("conversation.item.input_audio_transcription.completed")
        #expect(transcript?["transcript"]?.stringValue == "hello there")
        #expect(await client.events.allSatisfy { $0["type"]?.stringValue != "error" })
        await server.stop()
    }

    @Test func credentialsAreCheckedBeforeTheUpgrade() async throws {
        let server = try TestServer.start()
        let authority = ClientTokenAuthority(secret: server.secret)
        let expired = authority.mint(subject: "u", lifetime: 1, now: Date(timeIntervalSinceNow: -3600)).token
        let forged = ClientTokenAuthority(secret: "some-other-secret-value").mint(subject: "u").token
        let agent = try await server.request("POST", "/v1/agents", json: #"{"name":"Scoped"}"#)
        let agentID = try #require(agent.body["id"]?.stringValue)
        let otherAgentToken = authority.mint(subject: "u", agentID: "agent_other").token
        for (token, query) in [("", ""), (expired, ""), (forged, ""), ("not-a-token", ""), (otherAgentToken, "?agent=\(agentID)")] {
            await #expect(throws: (any Error).self, "token \(token.prefix(12)) \(query)") {
                _ = try await RealtimeTestClient.connect(server, token: token, query: query)
            }
        }
        let scoped = try await RealtimeTestClient.connect(server, token: authority.mint(subject: "u", agentID: agentID).token, query: "?agent=\(agentID)")
        #expect(await scoped.next("session.created") != nil)
        await server.stop()
    }

    @Test func committedItemsSurviveHostileInputAndAreStored() async throws {
        let server = try TestServer.start()
        let (instance, client) = try await RealtimeTestClient.connectToNewInstance(server, agentName: "Keeper", user: "ann")
        try await expectTextTurnWorks(client)
        for garbage in ["{", "[]", "null", #"{"type":42}"#, String(repeating: "{", count: 10_000)] { try client.send(garbage) }
        try client.socket.send(.binary(Data(count: 100)))
        try await expectTextTurnWorks(client)
        let conversationID = try #require(instance["conversation_id"]?.stringValue)
        let items = try await server.request("GET", "/v1/conversations/\(conversationID)/items")
        let roles = items.body["data"].map { value -> [String] in
            guard case .array(let entries) = value else { return [] }
            return entries.compactMap { $0["role"]?.stringValue }
        }
        #expect(roles == ["user", "assistant", "user", "assistant"])
        await server.stop()
    }
}
