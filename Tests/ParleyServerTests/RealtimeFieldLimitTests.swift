import Foundation
import ParleyCore
import ParleyServer
import Testing

/// Session fields over their limits and `response.create` with bad options: each gets an
/// `invalid_value` (or decoding) error naming the field, nothing changes, and the session goes on.
@Suite struct RealtimeFieldLimitTests {
    static func tools(count: Int, schemaBytes: Int = 10, name: (Int) -> String = { "tool_\($0)" }) -> String {
        (0..<count).map { index in
            #"{"type":"function","name":"\#(name(index))","description":"\#(String(repeating: "d", count: schemaBytes))","parameters":{"type":"object"}}"#
        }.joined(separator: ",")
    }

    static let metadataPairs = (0..<17).map { #""k\#($0)":"v""# }.joined(separator: ",")

    @Test(arguments: [
        (#"{"type":"session.update","session":{"instructions":"\#(String(repeating: "x", count: 65_537))"}}"#, "session.instructions"),
        (#"{"type":"session.update","session":{"tools":[\#(tools(count: 129))]}}"#, "session.tools"),
        (#"{"type":"session.update","session":{"tools":[\#(tools(count: 1, schemaBytes: 16_400))]}}"#, "session.tools[0].parameters"),
        (#"{"type":"session.update","session":{"tools":[\#(tools(count: 2, name: { _ in "twin" }))]}}"#, "session.tools[1].name"),
        (#"{"type":"session.update","session":{"tool_choice":{"type":"function","name":"missing"}}}"#, "session.tool_choice"),
        (#"{"type":"session.update","session":{"tool_choice":"required"}}"#, "session.tool_choice"),
        (#"{"type":"response.create","response":{"instructions":"\#(String(repeating: "x", count: 65_537))"}}"#, "response.instructions"),
        (#"{"type":"response.create","response":{"metadata":{\#(metadataPairs)}}}"#, "response.metadata"),
        (#"{"type":"response.create","response":{"metadata":{"k":"\#(String(repeating: "v", count: 513))"}}}"#, "response.metadata.k"),
        (#"{"type":"response.create","response":{"metadata":{"\#(String(repeating: "k", count: 65))":"v"}}}"#, "response.metadata"),
        (#"{"type":"response.create","response":{"tool_choice":"required","tools":[]}}"#, "response.tool_choice"),
        (#"{"type":"response.create","response":{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]}}"#, "response.input"),
        (#"{"type":"response.create","response":{"conversation":"none","input":[{"type":"message","role":"user","content":[]}]}}"#, "response.input[0]"),
    ])
    func fieldsOverTheirLimitsAreRefusedByName(event: String, param: String) async throws {
        try await expectRefused(event) { error, client in
            #expect(error?["error"]?["code"]?.stringValue == "invalid_value", "\(error?.jsonText ?? "no error")")
            #expect(error?["error"]?["param"]?.stringValue == param, "\(error?.jsonText ?? "no error")")
            #expect(await client.events.allSatisfy { $0["type"]?.stringValue != "session.updated" && $0["type"]?.stringValue != "response.created" })
        }
    }

    @Test(arguments: [
        (#"{"type":"response.create","response":{"conversation":"elsewhere"}}"#, "unsupported_value"),
        (#"{"type":"response.create","response":{"output_modalities":["smell"]}}"#, "invalid_value"),
        (#"{"type":"response.create","response":{"max_output_tokens":0}}"#, "invalid_value"),
        (#"{"type":"response.create","response":{"metadata":{"k":5}}}"#, "invalid_value"),
        (#"{"type":"response.create","response":{"tools":[{"type":"file_search"}]}}"#, "unsupported_value"),
        (#"{"type":"response.create","response":"now"}"#, "invalid_value"),
        (#"{"type":"conversation.item.create","previous_item_id":"item_nope","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}"#, "item_not_found"),
    ])
    func malformedResponseOptionsGetAnError(event: String, code: String) async throws {
        try await expectRefused(event) { error, _ in
            #expect(error?["error"]?["code"]?.stringValue == code, "\(error?.jsonText ?? "no error")")
        }
    }

    /// Sends `event` on a fresh session, hands the error it got to `check`, and expects a text
    /// turn to work afterwards.
    private func expectRefused(
        _ event: String, check: (JSONValue?, RealtimeTestClient) async -> Void
    ) async throws {
        let server = try TestServer.start()
        let client = try await RealtimeTestClient.connect(server)
        #expect(await client.next("session.created") != nil)
        try client.send(event)
        await check(await client.next("error"), client)
        try await RealtimeHostileInputTests().expectTextTurnWorks(client)
        client.socket.close()
        await server.stop()
    }

    @Test func aDuplicateItemIDIsRefusedAndTheFirstItemKept() async throws {
        let server = try TestServer.start()
        let client = try await RealtimeTestClient.connect(server)
        let item = #"{"type":"conversation.item.create","item":{"id":"item_mine","type":"message","role":"user","content":[{"type":"input_text","text":"first"}]}}"#
        try client.send(item)
        #expect(await client.next("conversation.item.added") != nil)
        try client.send(item.replacingOccurrences(of: "first", with: "second"))
        #expect(await client.next("error")?["error"]?["param"]?.stringValue == "item.id")
        try client.send(#"{"type":"conversation.item.retrieve","item_id":"item_mine"}"#)
        let retrieved = await client.next("conversation.item.retrieved")
        guard case .array(let content)? = retrieved?["item"]?["content"] else {
            Issue.record("no item content in \(retrieved?.jsonText ?? "nothing")")
            return
        }
        #expect(content.first?["text"]?.stringValue == "first")
        client.socket.close()
        await server.stop()
    }
}
