import Foundation
import ParleyCore
import ParleyNet
import ParleyServer
import Testing

/// One user's client never reaches another's conversation: hostile clients against a real server.
@Suite("Security: no crossing between users")
struct SecurityCrossUserTests {
    /// Starts an instance of a new agent for `user`; returns the agent, the instance and its conversation.
    static func instance(_ server: TestServer, user: String) async throws -> (agentID: String, instanceID: String, conversationID: String) {
        let agent = try await server.request("POST", "/v1/agents", json: #"{"name":"Desk"}"#)
        let agentID = try #require(agent.body["id"]?.stringValue)
        let instance = try await server.request("POST", "/v1/agents/\(agentID)/instances", json: #"{"user":"\#(user)"}"#)
        return (agentID, try #require(instance.body["id"]?.stringValue), try #require(instance.body["conversation_id"]?.stringValue))
    }

    /// The texts of a conversation's stored items, by item id.
    static func storedTexts(_ server: TestServer, conversation: String) async throws -> [String: String] {
        let items = try await server.request("GET", "/v1/conversations/\(conversation)/items")
        var texts: [String: String] = [:]
        for item in items.body["data"]?.arrayElements ?? [] {
            guard let id = item["id"]?.stringValue else { continue }
            texts[id] = item["text"]?.stringValue ?? ""
        }
        return texts
    }

    @Test("alice's unscoped and agent-scoped tokens cannot join bob's instance; bob's own token can")
    func anotherUsersInstanceIsClosed() async throws {
        let server = try TestServer.start()
        let bob = try await Self.instance(server, user: "bob")
        let tokens = [
            ("unscoped", server.clientToken(user: "alice")),
            ("agent-scoped", server.clientToken(user: "alice", agentID: bob.agentID)),
        ]
        for (kind, token) in tokens {
            if let opened = try? await RealtimeTestClient.connect(server, token: token, query: "?instance=\(bob.instanceID)") {
                let error = await opened.next("error", seconds: 10)
                #expect(error?["error"]?["code"]?.stringValue == "session_setup_failed", "alice's \(kind) token joined bob's instance")
                #expect(await !opened.events.contains { $0["type"]?.stringValue == "session.created" }, "\(kind): a session started")
                #expect(await !opened.events.contains { $0["type"]?.stringValue == "conversation.item.added" }, "\(kind): bob's history was sent")
            }
        }
        let bobs = try await RealtimeTestClient.connect(server, token: server.clientToken(user: "bob"), query: "?instance=\(bob.instanceID)")
        #expect(await bobs.next("conversation.created")?["conversation"]?["id"]?.stringValue == bob.conversationID)
        bobs.socket.close(code: 1000, reason: "done")
        await server.stop()
    }

    @Test("client_secrets carry a user and instance scope, and a browser presents them in its subprotocol")
    func clientSecretsCarryTheirScope() async throws {
        let server = try TestServer.start()
        let bob = try await Self.instance(server, user: "bob")
        func secret(_ body: String) async throws -> String {
            let response = try await server.request("POST", "/v1/realtime/client_secrets", json: body)
            return try #require(response.body["value"]?.stringValue, "\(response.body)")
        }
        func browserConnect(_ token: String, query: String) async throws -> RealtimeTestClient {
            let url = try #require(URL(string: "ws://127.0.0.1:\(server.port)/v1/realtime\(query)"))
            return RealtimeTestClient(socket: try await WebSocketClient.connect(
                to: url, subprotocols: ["realtime", "openai-insecure-api-key." + token]))
        }

        let alices = try await secret(#"{"expires_after":{"seconds":600},"user":"alice"}"#)
        if let opened = try? await browserConnect(alices, query: "?instance=\(bob.instanceID)") {
            let error = await opened.next("error", seconds: 10)
            #expect(error?["error"]?["code"]?.stringValue == "session_setup_failed", "alice's client secret joined bob's instance")
            #expect(await !opened.events.contains { $0["type"]?.stringValue == "session.created" })
        }
        let bobsInstance = try await secret(#"{"instance_id":"\#(bob.instanceID)"}"#)
        let joined = try await browserConnect(bobsInstance, query: "")
        #expect(await joined.next("conversation.created")?["conversation"]?["id"]?.stringValue == bob.conversationID)
        joined.socket.close(code: 1000, reason: "done")

        let refused = try await server.request("POST", "/v1/realtime/client_secrets", json: #"{"user":""}"#)
        #expect(refused.status == 400)
        await server.stop()
    }

    @Test("an item id reused in another conversation changes nothing in the first, and deleting it there removes nothing")
    func itemIdsDoNotCrossConversations() async throws {
        let server = try TestServer.start()
        let alice = try await Self.instance(server, user: "alice")
        let mallory = try await Self.instance(server, user: "mallory")
        let first = try await RealtimeTestClient.connect(server, token: server.clientToken(user: "alice"), query: "?instance=\(alice.instanceID)")
        try first.send(#"{"type":"conversation.item.create","item":{"id":"item_shared_01","type":"message","role":"user","content":[{"type":"input_text","text":"Alice's words"}]}}"#)
        #expect(await first.next("conversation.item.added") != nil)
        first.socket.close(code: 1000, reason: "done")
        #expect(await ResourceProbe.eventually(within: 10) {
            (try? await Self.storedTexts(server, conversation: alice.conversationID))?["item_shared_01"] == "Alice's words"
        })

        let second = try await RealtimeTestClient.connect(server, token: server.clientToken(user: "mallory"), query: "?instance=\(mallory.instanceID)")
        try second.send(#"{"type":"conversation.item.create","item":{"id":"item_shared_01","type":"message","role":"user","content":[{"type":"input_text","text":"Mallory's words"}]}}"#)
        _ = await second.next("conversation.item.added")
        try second.send(#"{"type":"conversation.item.delete","item_id":"item_shared_01"}"#)
        _ = await second.next("conversation.item.deleted")
        // One more round trip, so the writes before it are stored.
        try second.send(#"{"type":"conversation.item.create","item":{"id":"item_marker_01","type":"message","role":"user","content":[{"type":"input_text","text":"done"}]}}"#)
        _ = await second.next("conversation.item.added")
        second.socket.close(code: 1000, reason: "done")
        #expect(await ResourceProbe.eventually(within: 10) {
            (try? await Self.storedTexts(server, conversation: mallory.conversationID))?["item_marker_01"] == "done"
        })

        let aliceItems = try await Self.storedTexts(server, conversation: alice.conversationID)
        #expect(aliceItems == ["item_shared_01": "Alice's words"], "alice's conversation changed: \(aliceItems)")
        let malloryItems = try await Self.storedTexts(server, conversation: mallory.conversationID)
        #expect(malloryItems["item_shared_01"] == nil, "mallory's delete did not remove her own copy: \(malloryItems)")
        await server.stop()
    }
}
