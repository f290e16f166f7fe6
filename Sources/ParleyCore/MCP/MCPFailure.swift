import Foundation

/// Why a request to an MCP server failed, in the three kinds OpenAI's `mcp_call` error has.
public struct MCPFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure, as the `type` of an `mcp_call` item's `error`.
    public enum Kind: String, Sendable, Hashable {
        /// The server answered with an HTTP error status, or could not be reached (503), did
        /// not answer in time (504), or its URL was refused before connecting (403: a server a
        /// client named resolves to a non-public address): `http_error`.
        case http = "http_error"
        /// The server answered with a JSON-RPC error, or with something that is not a valid
        /// answer (-32700 garbage, -32603 no answer): `protocol_error`.
        case protocolError = "protocol_error"
        /// The tool ran and reported an error (`isError`): `tool_execution_error`.
        case toolExecution = "tool_execution_error"
    }

    /// The kind.
    public var kind: Kind
    /// The HTTP status or JSON-RPC error code; `nil` for tool execution errors.
    public var code: Int?
    /// What went wrong, for the model and the client.
    public var message: String

    /// Creates a failure.
    public init(_ kind: Kind, code: Int? = nil, message: String) {
        self.kind = kind
        self.code = code
        self.message = message
    }

    public var description: String { modelText }

    /// The failure as the tool output the model reads: `[mcp <kind> <code>] <message>`. The
    /// event translator reads it back with `init(toolOutput:)`.
    public var modelText: String {
        "[mcp \(kind.rawValue)\(code.map { " \($0)" } ?? "")] \(message)"
    }

    /// The failure a tool output written from `modelText` (after the registry's `Error: `) holds.
    public init?(toolOutput: String) {
        let text = toolOutput.hasPrefix("Error: ") ? toolOutput.dropFirst(7) : Substring(toolOutput)
        guard text.hasPrefix("[mcp "), let close = text.firstIndex(of: "]") else { return nil }
        let words = text[text.index(text.startIndex, offsetBy: 5)..<close].split(separator: " ")
        guard let first = words.first, let kind = Kind(rawValue: String(first)) else { return nil }
        self.kind = kind
        self.code = words.dropFirst().first.flatMap { Int($0) }
        self.message = String(text[text.index(after: close)...]).trimmingCharacters(in: .whitespaces)
    }

    /// The server could not be reached.
    public static func unreachable(_ label: String, _ error: any Error) -> MCPFailure {
        MCPFailure(.http, code: 503, message: "MCP server \"\(label)\" could not be reached: \(error)")
    }

    /// The server answered with something that is not JSON-RPC.
    public static func garbage(_ label: String, _ detail: String) -> MCPFailure {
        MCPFailure(.protocolError, code: -32700, message: "MCP server \"\(label)\" sent an invalid answer: \(detail)")
    }
}
