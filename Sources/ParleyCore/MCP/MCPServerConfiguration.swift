import Foundation

/// A remote MCP server an agent or a session uses for tools, as OpenAI's `{"type": "mcp", …}`
/// tool describes it.
public struct MCPServerConfiguration: Sendable, Hashable {
    /// The name the server goes by in events and items (`server_label`).
    public var label: String
    /// The Streamable HTTP endpoint (`server_url`), `http` or `https`.
    public var url: URL
    /// The bearer token sent as `Authorization: Bearer …`; never shown to clients or logged.
    public var authorization: String?
    /// Extra request headers (for example the server's own credentials); never shown to clients.
    public var headers: [String: String]
    /// Which of the server's tools the model may see; `nil` allows all.
    public var allowedTools: MCPToolFilter?
    /// Which calls wait for the client's approval.
    public var requireApproval: MCPApprovalPolicy
    /// How long listing the tools may take.
    public var listTimeout: Duration
    /// How long one call may take, when not the agent's tool timeout.
    public var callTimeout: Duration?

    /// Creates a configuration; approval defaults to `always`, as OpenAI's does.
    public init(
        label: String, url: URL, authorization: String? = nil, headers: [String: String] = [:],
        allowedTools: MCPToolFilter? = nil, requireApproval: MCPApprovalPolicy = .always, listTimeout: Duration = .seconds(10),
        callTimeout: Duration? = nil
    ) {
        self.callTimeout = callTimeout
        self.label = label
        self.url = url
        self.authorization = authorization
        self.headers = headers
        self.allowedTools = allowedTools
        self.requireApproval = requireApproval
        self.listTimeout = listTimeout
    }
}

/// Selects tools by name or by their `readOnlyHint` annotation (OpenAI's `McpToolFilter`).
public struct MCPToolFilter: Sendable, Hashable {
    /// Tools with one of these names match.
    public var toolNames: [String]?
    /// When set, tools whose `readOnlyHint` equals it match.
    public var readOnly: Bool?

    /// Creates a filter.
    public init(toolNames: [String]? = nil, readOnly: Bool? = nil) {
        self.toolNames = toolNames
        self.readOnly = readOnly
    }

    /// Whether `tool` matches every criterion given.
    public func matches(_ tool: MCPToolDescription) -> Bool {
        if let toolNames, !toolNames.contains(tool.name) { return false }
        if let readOnly, tool.isReadOnly != readOnly { return false }
        return toolNames != nil || readOnly != nil
    }
}

/// Which calls to an MCP server wait for the client's approval (OpenAI's `require_approval`).
public enum MCPApprovalPolicy: Sendable, Hashable {
    /// Every call.
    case always
    /// No call.
    case never
    /// Calls matching `never` run at once, calls matching `always` wait; the rest wait too.
    case filter(always: MCPToolFilter?, never: MCPToolFilter?)

    /// Whether a call of `tool` waits for approval.
    public func requiresApproval(_ tool: MCPToolDescription) -> Bool {
        switch self {
        case .always: return true
        case .never: return false
        case .filter(let always, let never):
            if always?.matches(tool) == true { return true }
            return never?.matches(tool) != true
        }
    }
}

/// A tool as an MCP server lists it.
public struct MCPToolDescription: Sendable, Hashable {
    /// The tool's name.
    public var name: String
    /// What it does.
    public var description: String?
    /// The JSON Schema of its arguments.
    public var inputSchema: JSONValue
    /// The server's annotations (`readOnlyHint`, …), if any.
    public var annotations: JSONValue?

    /// Creates a description.
    public init(name: String, description: String?, inputSchema: JSONValue, annotations: JSONValue?) {
        self.name = name
        self.description = description
        self.inputSchema = inputSchema
        self.annotations = annotations
    }

    /// Whether the server says the tool changes nothing (`readOnlyHint`).
    public var isReadOnly: Bool { annotations?["readOnlyHint"]?.boolValue ?? false }
}
