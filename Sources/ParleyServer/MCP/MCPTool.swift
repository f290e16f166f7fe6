import Foundation
import ParleyCore

/// One tool of an MCP server, offered to the agent like any other tool: a call goes to the
/// server as `tools/call`, and a failure comes back as a `ToolError` whose text
/// (`MCPFailure.modelText`) tells the model, and the client's `mcp_call` item, what went wrong.
/// A server too slow for the call's timeout is an `http_error` 504.
struct MCPTool: Tool {
    /// How long a call may take when the server's configuration names no timeout.
    static let defaultTimeout = Duration.seconds(15)

    /// The server's client.
    let client: MCPClient
    /// The tool as the server listed it.
    let listing: MCPToolDescription

    var name: String { listing.name }
    var description: String { listing.description ?? "" }
    var parameters: JSONValue { listing.inputSchema }
    /// The agent's deadline only backs up the call's own, which comes first and says 504.
    var timeout: Duration? { callTimeout + .seconds(5) }
    private var callTimeout: Duration { client.configuration.callTimeout ?? Self.defaultTimeout }

    func call(arguments: JSONValue) async throws -> String {
        do {
            let client = client, name = listing.name
            return try await MCPToolbox.withDeadline(callTimeout, label: client.configuration.label) {
                try await client.callTool(name, arguments: arguments)
            }
        } catch let failure as MCPFailure {
            throw ToolError(failure.modelText)
        }
    }
}
