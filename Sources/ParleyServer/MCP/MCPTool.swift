import Foundation
import ParleyCore

/// One tool of an MCP server, offered to the agent like any other tool: a call goes to the
/// server as `tools/call`, and a failure comes back as a `ToolError` whose text
/// (`MCPFailure.modelText`) tells the model, and the client's `mcp_call` item, what went wrong.
struct MCPTool: Tool {
    /// The server's client.
    let client: MCPClient
    /// The tool as the server listed it.
    let listing: MCPToolDescription

    var name: String { listing.name }
    var description: String { listing.description ?? "" }
    var parameters: JSONValue { listing.inputSchema }
    var timeout: Duration? { client.configuration.callTimeout }

    func call(arguments: JSONValue) async throws -> String {
        do {
            return try await client.callTool(listing.name, arguments: arguments)
        } catch let failure as MCPFailure {
            throw ToolError(failure.modelText)
        }
    }
}
