import Foundation
import ParleyCore
import ParleyServer
import ParleyTesting
import Testing

/// `parley.key_press` on the realtime WebSocket door: a key press reaches an agent that asks for
/// key presses as a phone's does, and is refused (the session unchanged) when it does not.
@Suite struct RealtimeKeyPressTests {
    /// A server whose sessions ask `model`, logging to `logs`.
    private static func start(_ model: ScriptedLanguageModel, logs: LoggedEvents) throws -> TestServer {
        var providers = TestServer.testProviders()
        providers.languageModel = model
        return try TestServer.start(providers: providers, log: logs.log)
    }

    /// Creates an agent from `definition` and returns its id.
    private static func createAgent(_ server: TestServer, _ definition: String) async throws -> String {
        let created = try await server.request("POST", "/v1/agents", json: definition)
        #expect(created.status == 201, "\(created.body)")
        return try #require(created.body["id"]?.stringValue)
    }

    /// A session with an agent that asks for key presses, once it is created.
    private static func connectToPhoneMenu(_ model: ScriptedLanguageModel, logs: LoggedEvents) async throws -> (TestServer, RealtimeTestClient) {
        let server = try start(model, logs: logs)
        let agentID = try await createAgent(server, #"{"name":"Phone menu","telephony":{"key_press_messages":true}}"#)
        let client = try await RealtimeTestClient.connect(server, query: "?agent=\(agentID)")
        #expect(await client.next("session.created") != nil)
        return (server, client)
    }

    @Test func aKeyPressBecomesAUserMessageTheAgentAnswers() async throws {
        let logs = LoggedEvents()
        let model = ScriptedLanguageModel(replies: [], fallback: .text("You pressed five."))
        let (server, client) = try await Self.connectToPhoneMenu(model, logs: logs)
        defer { Task { await server.stop() } }

        try client.send(#"{"type":"parley.key_press","key":"5","event_id":"key_1"}"#)
        let done = await client.next("response.done")
        let events = await client.events
        #expect(done?["response"]?["status"]?.stringValue == "completed", "\(events)")
        #expect(model.requests.count == 1)
        #expect(model.requests.first?.messages.last == .user("The caller pressed 5."))
        #expect(events.allSatisfy { $0["type"]?.stringValue != "error" }, "\(events)")
        // Which key is never logged: callers type PINs.
        #expect(logs.events("session.key_press").count == 1)
        #expect(logs.events("session.key_press").first?["key"] == nil)
        #expect(!logs.texts.contains { $0.contains("pressed 5") || $0.contains(#""5""#) }, "\(logs.texts)")
    }

    @Test(arguments: [#"{"name":"Front desk"}"#, #"{"name":"Silent menu","telephony":{"key_press_messages":false}}"#, nil])
    func aKeyPressIsRefusedWhenTheAgentDoesNotAskForThem(definition: String?) async throws {
        let logs = LoggedEvents()
        let model = ScriptedLanguageModel(replies: [], fallback: .text("Hello."))
        let server = try Self.start(model, logs: logs)
        defer { Task { await server.stop() } }
        var query = ""
        if let definition { query = "?agent=\(try await Self.createAgent(server, definition))" }
        let client = try await RealtimeTestClient.connect(server, query: query)
        #expect(await client.next("session.created") != nil)

        try client.send(#"{"type":"parley.key_press","key":"5","event_id":"key_1"}"#)
        let error = try #require(await client.next("error")?["error"])
        #expect(error["code"]?.stringValue == "key_presses_off")
        #expect(error["param"]?.stringValue == "key")
        #expect(error["event_id"]?.stringValue == "key_1")
        #expect(error["message"]?.stringValue?.contains("telephony.key_press_messages") == true, "\(error)")

        // The session is unchanged and keeps working: the next response is the only one, and
        // the model never hears of the key.
        try client.send(RealtimeHostileInputTests.sayHello)
        try client.send(#"{"type":"response.create"}"#)
        #expect(await client.next("response.done")?["response"]?["status"]?.stringValue == "completed")
        #expect(await client.events.filter { $0["type"]?.stringValue == "response.created" }.count == 1)
        #expect(model.requests.count == 1)
        #expect(model.requests.first?.messages.contains(.user("The caller pressed 5.")) == false)
        #expect(logs.events("session.key_press").isEmpty)
    }

    @Test func aKeyPressInATranscriptionSessionIsRefusedLikeAResponse() async throws {
        let logs = LoggedEvents()
        let model = ScriptedLanguageModel(replies: [], fallback: .text("You pressed five."))
        let (server, client) = try await Self.connectToPhoneMenu(model, logs: logs)
        defer { Task { await server.stop() } }
        try client.send(#"{"type":"session.update","session":{"type":"transcription"}}"#)
        #expect(await client.next("session.updated") != nil)

        try client.send(#"{"type":"parley.key_press","key":"5","event_id":"key_1"}"#)
        let error = try #require(await client.next("error")?["error"])
        #expect(error["param"]?.stringValue == "session.type", "\(error)")
        #expect(error["event_id"]?.stringValue == "key_1")
        #expect(await client.events.allSatisfy { $0["type"]?.stringValue != "response.created" })
        #expect(model.requests.isEmpty)
    }

    @Test(arguments: [#""55""#, #""x""#, #""""#, "null", "5"])
    func aKeyThatIsNotOneOfTheKeypadIsAnInvalidValue(key: String) async throws {
        let model = ScriptedLanguageModel(replies: [], fallback: .text("Hello."))
        let server = try Self.start(model, logs: LoggedEvents())
        defer { Task { await server.stop() } }
        let agentID = try await Self.createAgent(server, #"{"name":"Phone menu","telephony":{"key_press_messages":true}}"#)
        let client = try await RealtimeTestClient.connect(server, query: "?agent=\(agentID)")
        try client.send(#"{"type":"parley.key_press","key":\#(key)}"#)
        let error = try #require(await client.next("error")?["error"])
        #expect(error["code"]?.stringValue == "invalid_value")
        #expect(error["param"]?.stringValue == "key")
        #expect(model.requests.isEmpty)
    }
}
