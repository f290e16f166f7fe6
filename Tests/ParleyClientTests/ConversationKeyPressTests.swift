import Foundation
import ParleyClient
import ParleyCore
import ParleyNet
import ParleyTesting
import Testing

/// `ConversationModel.pressKey(_:)` against a real in-process Parley server: a phone menu agent
/// answers the key, and an agent that does not ask for key presses refuses it.
@MainActor
@Suite struct ConversationKeyPressTests {
    /// A model connected to `server` as the agent `definition` describes (the default agent when `nil`).
    private static func connectedModel(_ server: ClientTestServer, agent definition: String?) async throws -> ConversationModel {
        var agentID: String?
        if let definition {
            let response = try await HTTPClient.shared.send(HTTPClient.Request(
                url: server.baseURL.appendingPathComponent("v1/agents"), method: "POST",
                headers: ["Authorization": "Bearer \(ClientTestServer.secret)", "Content-Type": "application/json"], body: Data(definition.utf8)
            ))
            #expect(response.status == 201)
            agentID = try JSONValue(parsing: String(decoding: response.body, as: UTF8.self))["id"]?.stringValue
        }
        let configuration = RealtimeClient.Configuration(server: server.baseURL, agentID: agentID)
        let model = ConversationModel(client: RealtimeClient(configuration: configuration, token: TokenDispenser().next), audio: FakeConversationAudio())
        model.connect()
        try #require(await waitUntil("connected") { model.status == .ready })
        return model
    }

    @Test func aPressedKeyIsToldToTheAgentWhichAnswers() async throws {
        let server = try ClientTestServer.start()
        let model = try await Self.connectedModel(server, agent: #"{"name": "Phone menu", "telephony": {"key_press_messages": true}}"#)
        #expect(!model.pressKey("55"))
        #expect(!model.pressKey("x"))
        #expect(model.pressKey("5"))
        await waitUntil("the key press is answered") { model.messages.last?.role == .agent && model.messages.last?.status == .complete }
        #expect(model.messages.map(\.text) == ["The caller pressed 5.", "Hello from Parley."])
        #expect(model.error == nil)
        #expect(model.diagnostics.sentEvents["parley.key_press"] == 1)
        model.disconnect()
        await server.stop()
    }

    @Test func anAgentThatDoesNotAskForKeyPressesRefusesThem() async throws {
        let server = try ClientTestServer.start()
        let model = try await Self.connectedModel(server, agent: nil)
        #expect(model.pressKey("5"))
        await waitUntil("the refusal is shown") { model.error != nil }
        #expect(model.error?.message.contains("telephony.key_press_messages") == true, "\(String(describing: model.error))")
        #expect(model.messages.isEmpty)
        model.disconnect()
        await server.stop()
    }
}
