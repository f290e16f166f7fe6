import Foundation
import Testing
@testable import ParleyCore

/// MCP tools in `session.update`, and the MCP items, in the realtime codec.
@Suite struct MCPRealtimeCodingTests {
    private static func update(_ tool: String) throws(RealtimeProtocolError) -> RealtimeSessionSettings? {
        let event = try RealtimeClientEvent.decode(#"{"type":"session.update","session":{"type":"realtime","tools":[\#(tool)]}}"#, dialect: .ga)
        guard case .sessionUpdate(let settings, _) = event else { return nil }
        return settings
    }

    @Test func anMCPToolIsDecodedAndWrittenBackWithoutItsSecrets() throws {
        let settings = try #require(try Self.update(#"""
            {"type":"mcp","server_label":"shop","server_url":"https://mcp.example.com/mcp","authorization":"tok-123",
             "headers":{"X-Key":"hdr-456"},"allowed_tools":["lookup"],"require_approval":{"never":{"tool_names":["lookup"]}}}
            """#))
        let server = try #require(settings.mcpServers?.first)
        #expect(server.label == "shop" && server.authorization == "tok-123" && server.headers == ["X-Key": "hdr-456"])
        #expect(server.allowedTools == MCPToolFilter(toolNames: ["lookup"]))
        let lookup = MCPToolDescription(name: "lookup", description: nil, inputSchema: [:], annotations: nil)
        let cancel = MCPToolDescription(name: "cancel", description: nil, inputSchema: [:], annotations: nil)
        #expect(!server.requireApproval.requiresApproval(lookup) && server.requireApproval.requiresApproval(cancel))
        #expect(settings.tools == [])
        let written = RealtimeServerEvent.sessionUpdated(RealtimeSessionInfo(id: "sess_1", settings: settings)).encode(dialect: .ga) ?? ""
        #expect(written.contains(#""server_label":"shop""#))
        #expect(!written.contains("tok-123") && !written.contains("hdr-456"))
        #expect(RealtimeServerEvent.sessionUpdated(RealtimeSessionInfo(id: "sess_1", settings: settings)).encode(dialect: .beta)?.contains("mcp") == false)
    }

    @Test(arguments: [
        (#"{"type":"mcp","server_label":"a b","server_url":"https://x.example"}"#, "tools[0].server_label"),
        (#"{"type":"mcp","server_label":"ok","server_url":"ftp://x.example"}"#, "tools[0].server_url"),
        (#"{"type":"mcp","server_label":"ok","connector_id":"connector_gmail"}"#, "tools[0].connector_id"),
        (#"{"type":"mcp","server_label":"ok","server_url":"https://x.example","headers":{"A":"b\r\nEvil: 1"}}"#, "tools[0].headers"),
        (#"{"type":"mcp","server_label":"ok","server_url":"https://x.example","require_approval":"sometimes"}"#, "tools[0].require_approval"),
    ])
    func aBadMCPToolIsRefusedNamingTheField(tool: String, parameter: String) {
        do {
            _ = try Self.update(tool)
            Issue.record("accepted \(tool)")
        } catch {
            #expect(error.param?.hasSuffix(parameter) == true, "\(error.param ?? "-"): \(error.message)")
        }
    }

    @Test func theMCPItemsSurviveARoundTrip() throws {
        let items: [RealtimeItem] = [
            RealtimeItem(id: "item_1", kind: .mcpListTools(serverLabel: "shop", tools: [
                MCPToolDescription(name: "add", description: "Adds.", inputSchema: ["type": "object"], annotations: ["readOnlyHint": true]),
            ])),
            RealtimeItem(id: "item_2", kind: .mcpCall(serverLabel: "shop", name: "add", arguments: "{}", approvalRequestID: "item_3", output: "2", error: nil)),
            RealtimeItem(id: "item_2", kind: .mcpCall(
                serverLabel: "shop", name: "add", arguments: "{}", approvalRequestID: nil, output: nil, error: MCPFailure(.http, code: 503, message: "down")
            )),
            RealtimeItem(id: "item_3", kind: .mcpApprovalRequest(serverLabel: "shop", name: "add", arguments: "{}")),
            RealtimeItem(id: "item_4", kind: .mcpApprovalResponse(approvalRequestID: "item_3", approve: true, reason: nil)),
        ]
        for item in items {
            #expect(try RealtimeItem(jsonText: item.jsonText(dialect: .ga)) == item)
            #expect(item.chatMessage == nil)
        }
    }

    @Test func aToolFailureReadsBackFromItsModelText() {
        let failure = MCPFailure(.protocolError, code: -32601, message: "MCP server \"shop\" returned error -32601: no such method")
        #expect(MCPFailure(toolOutput: "Error: " + failure.modelText) == failure)
        #expect(MCPFailure(toolOutput: "Error: add did not finish within 15 s.") == nil)
    }
}
