import Foundation
import ParleyCore
import ParleyServer
import ParleyTesting
import Testing

/// MCP tools through the realtime endpoint, against a real MCP server from PyPI's `mcp`; every
/// event a test received is validated against the `openai` SDK's models.
@Suite(.serialized)
struct MCPRealtimeTests {
    static let token = "mcp-secret-token"

    /// A `session.update` giving the session the test server as `calc`.
    static func sessionUpdate(_ server: MCPTestServer, approval: String = "never", allowed: String? = nil) -> String {
        let allowedTools = allowed.map { #","allowed_tools":\#($0)"# } ?? ""
        return #"{"type":"session.update","session":{"type":"realtime","output_modalities":["text"],"tools":[{"type":"mcp","server_label":"calc","server_url":"\#(server.url.absoluteString)","authorization":"\#(token)","require_approval":"\#(approval)"\#(allowedTools)}]}}"#
    }

    /// A Parley server answering with `replies`, a client connected to it with the MCP server
    /// configured and listed, and the MCP server.
    private static func withSession(
        replies: [ScriptedLanguageModel.Reply], approval: String = "never",
        _ body: (RealtimeTestClient, ScriptedLanguageModel, MCPTestServer) async throws -> Void
    ) async throws {
        try await MCPTestServer.with(token: token) { (mcp: MCPTestServer) async throws in
            let model = ScriptedLanguageModel(replies: replies, fallback: .text("Done."))
            var providers = TestServer.testProviders()
            providers.languageModel = model
            let server = try TestServer.start(providers: providers)
            do {
                let client = try await RealtimeTestClient.connect(server)
                try client.send(sessionUpdate(mcp, approval: approval))
                let updated = try #require(await client.next("session.updated"))
                #expect(!updated.jsonText.contains(token), "the token was shown to the client")
                #expect(updated["session"]?["tools"]?.jsonText.contains("\"server_label\":\"calc\"") == true)
                #expect(await client.next("mcp_list_tools.completed", seconds: 60) != nil)
                let listed = try #require(await client.next("conversation.item.done"))
                #expect(listed["item"]?["type"]?.stringValue == "mcp_list_tools")
                #expect(listed["item"]?["tools"].map { "\($0)" }?.contains("slow_echo") == true)
                try await body(client, model, mcp)
                try await validate(await client.events)
                client.socket.close(code: 1000, reason: "done")
            } catch {
                await server.stop()
                throw error
            }
            await server.stop()
        }
    }

    /// Validates `events` against the `openai` SDK's GA models.
    static func validate(_ events: [JSONValue]) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("mcp-events-\(UUID().uuidString).jsonl")
        try events.map(\.jsonText).joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../scripts/realtime-schema/validate_server_events.py").standardizedFileURL
        let result = try await ChildProcess.run(ChildProcess.python, [script.path, "--dialect", "ga", file.path], deadline: .seconds(120))
        #expect(result.status == 0, "\(result.output)")
    }

    private static func call(_ name: String, _ arguments: String, id: String = "call_1") -> ScriptedLanguageModel.Reply {
        .toolCalls([ToolCall(id: id, name: name, arguments: arguments)])
    }

    @Test("a client token may not name MCP servers (the server would call any URL it gives) unless the server allows it")
    func clientNamedServersNeedPermission() async throws {
        let update = #"{"type":"session.update","session":{"type":"realtime","tools":[{"type":"mcp","server_label":"inside","server_url":"http://127.0.0.1:9/mcp","require_approval":"never"}]}}"#
        let server = try TestServer.start()
        let client = try await RealtimeTestClient.connect(server, token: server.clientToken())
        try client.send(update)
        let refusal = try #require(await client.next("error"))
        #expect(refusal["error"]?["code"]?.stringValue == "mcp_servers_not_allowed")
        #expect(refusal["error"]?["param"]?.stringValue == "session.tools")
        try client.send(#"{"type":"session.update","session":{"type":"realtime","instructions":"Still here."}}"#)
        #expect(await client.next("session.updated") != nil, "the session goes on after the refusal")
        client.socket.close(code: 1000, reason: "done")
        await server.stop()

        let permissive = try TestServer.start { $0.clientsNameMCPServers = true }
        let allowed = try await RealtimeTestClient.connect(permissive, token: permissive.clientToken())
        try allowed.send(update)
        #expect(await allowed.next("session.updated") != nil)
        #expect(await allowed.events.allSatisfy { $0["error"]?["code"]?.stringValue != "mcp_servers_not_allowed" })
        allowed.socket.close(code: 1000, reason: "done")
        await permissive.stop()
        #expect(ServerSettings.load(environment: ["PARLEY_MCP_CLIENT_SERVERS": "on"]).0.clientsNameMCPServers)
        #expect(ServerSettings.load(environment: [:]).0.clientsNameMCPServers == false)
    }

    @Test("the model calls an MCP tool: mcp_call events, the output to the model, the bearer token to the server")
    func callsATool() async throws {
        try await Self.withSession(replies: [Self.call("add", #"{"a":2,"b":40}"#), .text("It is 42.")]) { client, model, mcp in
            try client.send(RealtimeHostileInputTests.sayHello)
            try client.send(#"{"type":"response.create"}"#)
            let added = try #require(await client.next("response.output_item.added"))
            #expect(added["item"]?["type"]?.stringValue == "mcp_call")
            #expect(await client.next("response.mcp_call_arguments.done")?["arguments"]?.stringValue == #"{"a":2,"b":40}"#)
            #expect(await client.next("response.mcp_call.in_progress") != nil)
            #expect(await client.next("response.mcp_call.completed") != nil)
            let done = try #require(await client.next("response.output_item.done"))
            #expect(done["item"]?["output"]?.stringValue == "42")
            #expect(done["item"]?["server_label"]?.stringValue == "calc")
            #expect(await client.next("response.done")?["response"]?["status"]?.stringValue == "completed")
            #expect(model.requests.count == 2)
            #expect(model.requests.last?.messages.contains(.tool(callID: "call_1", content: "42")) == true)
            #expect(model.requests.first?.tools.contains { $0.name == "add" } == true)
            #expect(mcp.receivedAuthorizations.allSatisfy { $0 == "Bearer \(Self.token)" })
        }
    }

    @Test("a failing tool and a server going down mid-call give typed errors and the turn ends")
    func failures() async throws {
        let replies: [ScriptedLanguageModel.Reply] = [
            Self.call("fail", #"{"message":"the shop is closed"}"#), .text("Sorry."),
            Self.call("crash", "{}", id: "call_2"), .text("Sorry again."),
        ]
        try await Self.withSession(replies: replies) { client, model, _ in
            try client.send(RealtimeHostileInputTests.sayHello)
            try client.send(#"{"type":"response.create"}"#)
            #expect(await client.next("response.mcp_call.failed") != nil)
            let failed = try #require(await client.next("response.output_item.done"))
            #expect(failed["item"]?["error"]?["type"]?.stringValue == "tool_execution_error")
            #expect(failed["item"]?["error"]?["message"]?.stringValue?.contains("the shop is closed") == true)
            #expect(await client.next("response.done")?["response"]?["status"]?.stringValue == "completed")

            try client.send(#"{"type":"response.create"}"#)
            #expect(await client.next("response.mcp_call.failed", seconds: 60) != nil)
            let down = try #require(await client.next("response.output_item.done"))
            #expect(down["item"]?["error"]?["type"]?.stringValue == "http_error", "\(down)")
            #expect(await client.next("response.done")?["response"]?["status"]?.stringValue == "completed")
            let toolMessages = model.requests.flatMap(\.messages).compactMap { message -> String? in
                if case .tool(_, let content) = message { content } else { nil }
            }
            #expect(toolMessages.contains { $0.contains("tool_execution_error") && $0.contains("the shop is closed") })
            #expect(toolMessages.contains { $0.contains("http_error") })
        }
    }

    @Test("approval: the request item, the approved call run once with its request id, a declined one reported to the model")
    func approvalFlow() async throws {
        let replies: [ScriptedLanguageModel.Reply] = [
            Self.call("count_calls", #"{"key":"approved"}"#), .text("Counted."),
            Self.call("count_calls", #"{"key":"declined"}"#, id: "call_2"), .text("Not counted."),
        ]
        try await Self.withSession(replies: replies, approval: "always") { client, model, _ in
            try client.send(RealtimeHostileInputTests.sayHello)
            try client.send(#"{"type":"response.create"}"#)
            let request = try #require(await client.next("response.output_item.done"))
            #expect(request["item"]?["type"]?.stringValue == "mcp_approval_request")
            let requestID = try #require(request["item"]?["id"]?.stringValue)
            #expect(await client.next("response.done") != nil)

            try client.send(#"{"type":"conversation.item.create","item":{"type":"mcp_approval_response","approval_request_id":"\#(requestID)","approve":true}}"#)
            #expect(await client.next("conversation.item.done")?["item"]?["type"]?.stringValue == "mcp_approval_response")
            // Answering the same request again is refused: the call never runs twice.
            try client.send(#"{"type":"conversation.item.create","item":{"type":"mcp_approval_response","approval_request_id":"\#(requestID)","approve":true}}"#)
            #expect(await client.next("error")?["error"]?["code"]?.stringValue == "item_not_found")
            try client.send(#"{"type":"response.create"}"#)
            let call = try #require(await client.next("response.output_item.done"))
            #expect(call["item"]?["type"]?.stringValue == "mcp_call")
            #expect(call["item"]?["approval_request_id"]?.stringValue == requestID)
            #expect(call["item"]?["output"]?.stringValue == "1")
            #expect(await client.next("response.done")?["response"]?["status"]?.stringValue == "completed")

            try client.send(#"{"type":"response.create"}"#)
            let second = try #require(await client.next("response.output_item.done"))
            let secondID = try #require(second["item"]?["id"]?.stringValue)
            #expect(await client.next("response.done") != nil)
            try client.send(#"{"type":"conversation.item.create","item":{"type":"mcp_approval_response","approval_request_id":"\#(secondID)","approve":false,"reason":"not now"}}"#)
            #expect(await client.next("conversation.item.done") != nil)
            try client.send(#"{"type":"response.create"}"#)
            #expect(await client.next("response.done")?["response"]?["status"]?.stringValue == "completed")
            #expect(model.requests.last?.messages.contains { message in
                if case .tool("call_2", let content) = message { content.contains("declined") && content.contains("not now") } else { false }
            } == true)
            let toolResults = model.requests.last?.messages.filter { if case .tool = $0 { true } else { false } } ?? []
            #expect(toolResults.count == 2)
        }
    }

    @Test("notifications/tools/list_changed lists the tools again and the new tool is offered")
    func listChanged() async throws {
        let replies: [ScriptedLanguageModel.Reply] = [Self.call("unlock_tool", "{}"), .text("Unlocked."), .text("Hello.")]
        try await Self.withSession(replies: replies) { client, model, _ in
            try client.send(RealtimeHostileInputTests.sayHello)
            try client.send(#"{"type":"response.create"}"#)
            #expect(await client.next("response.done") != nil)
            // The new list may come before or after the response ends.
            func lists() async -> [JSONValue] {
                await client.events.filter { $0["type"]?.stringValue == "conversation.item.done" && $0["item"]?["type"]?.stringValue == "mcp_list_tools" }
            }
            if await lists().count < 2 { _ = await client.next("mcp_list_tools.completed", seconds: 60) }
            if await lists().count < 2 { _ = await client.next("conversation.item.done") }
            let relisted = try #require(await lists().last)
            #expect(relisted["item"]?["tools"].map { "\($0)" }?.contains("secret_tool") == true)
            try client.send(#"{"type":"response.create"}"#)
            #expect(await client.next("response.done") != nil)
            #expect(model.requests.last?.tools.contains { $0.name == "secret_tool" } == true)
        }
    }

    @Test("an agent's mcp_servers are listed for its sessions, and its token is never returned")
    func agentServers() async throws {
        try await MCPTestServer.with(token: Self.token) { (mcp: MCPTestServer) async throws in
            let server = try TestServer.start()
            do {
                let definition = #"{"name":"Shop","mcp_servers":[{"server_label":"shop","server_url":"\#(mcp.url.absoluteString)","authorization":"\#(Self.token)","require_approval":"never","allowed_tools":["add"]}]}"#
                let created = try await server.request("POST", "/v1/agents", json: definition)
                #expect(created.status == 201 || created.status == 200, "\(created.body)")
                #expect(!created.body.jsonText.contains(Self.token))
                let agentID = try #require(created.body["id"]?.stringValue)
                let client = try await RealtimeTestClient.connect(server, query: "?agent=\(agentID)")
                #expect(await client.next("mcp_list_tools.completed", seconds: 60) != nil)
                let listed = try #require(await client.next("conversation.item.done"))
                #expect(listed["item"]?["tools"]?.jsonText.contains("\"add\"") == true)
                #expect(listed["item"]?["tools"]?.jsonText.contains("slow_echo") == false)
                let invalid = try await server.request("POST", "/v1/agents", json: #"{"mcp_servers":[{"server_label":"x y","server_url":"ftp://a"}]}"#)
                #expect(invalid.status == 400)
                client.socket.close(code: 1000, reason: "done")
            } catch {
                await server.stop()
                throw error
            }
            await server.stop()
        }
    }
}
