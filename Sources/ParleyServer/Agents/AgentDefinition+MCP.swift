import Foundation
import ParleyCore

extension AgentDefinition {
    /// An MCP server the agent uses for tools, with the fields of OpenAI's `{"type": "mcp"}`
    /// tool. `authorization` and `headers` are kept but never returned.
    public struct MCPServerSpecification: Codable, Sendable, Hashable {
        public var serverLabel: String
        public var serverURL: String
        /// The bearer token sent to the server.
        public var authorization: String?
        public var headers: [String: String]?
        /// Tool names the model may use; all when absent.
        public var allowedTools: [String]?
        /// `always` (the default, as OpenAI's) or `never`.
        public var requireApproval: String?
        /// How long one call may take, in milliseconds (default: the agent's tool timeout, 15 s).
        public var timeoutMs: Int?

        enum CodingKeys: String, CodingKey {
            case serverLabel = "server_label", serverURL = "server_url", authorization, headers
            case allowedTools = "allowed_tools", requireApproval = "require_approval", timeoutMs = "timeout_ms"
        }

        /// The client configuration; `nil` when the URL is not usable (validation reports it).
        var configuration: MCPServerConfiguration? {
            guard let url = URL(string: serverURL) else { return nil }
            return MCPServerConfiguration(
                label: serverLabel, url: url, authorization: authorization, headers: headers ?? [:],
                allowedTools: allowedTools.map { MCPToolFilter(toolNames: $0) },
                requireApproval: requireApproval == "never" ? .never : .always,
                callTimeout: timeoutMs.map { .milliseconds($0) }
            )
        }
    }

    /// The configurations of the agent's MCP servers.
    var mcpServerConfigurations: [MCPServerConfiguration] {
        (mcpServers ?? []).compactMap(\.configuration)
    }

    /// Problems with `mcp_servers`, one line each.
    func mcpValidationProblems() -> [String] {
        var problems: [String] = []
        var labels = Set<String>()
        for (index, server) in (mcpServers ?? []).enumerated() {
            let prefix = "mcp_servers[\(index)]"
            let label = server.serverLabel
            if !labels.insert(label).inserted { problems.append("\(prefix).server_label: \"\(label)\" is used twice") }
            if label.isEmpty || label.count > 64 || !label.allSatisfy({ ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "_" || $0 == "-" }) {
                problems.append("\(prefix).server_label: 1 to 64 letters, digits, _ and - only")
            }
            if URL(string: server.serverURL)?.scheme.map({ ["http", "https"].contains($0.lowercased()) }) != true {
                problems.append("\(prefix).server_url: must be an http(s) URL")
            }
            if let timeout = server.timeoutMs, !(1...600_000).contains(timeout) {
                problems.append("\(prefix).timeout_ms: must be between 1 and 600000")
            }
            if let approval = server.requireApproval, !["always", "never"].contains(approval) {
                problems.append("\(prefix).require_approval: must be \"always\" or \"never\"")
            }
            let headerTexts = Array((server.headers ?? [:]).keys) + Array((server.headers ?? [:]).values) + [server.authorization ?? ""]
            if headerTexts.contains(where: { $0.unicodeScalars.contains { $0 == "\r" || $0 == "\n" || $0 == "\0" } }) {
                problems.append("\(prefix): headers and authorization must not contain line breaks")
            }
        }
        return problems
    }

    /// `mcp_servers` with the secrets removed.
    var redactedMCPServers: [MCPServerSpecification]? {
        mcpServers?.map { server in
            var server = server
            server.authorization = server.authorization.map { _ in "[redacted]" }
            server.headers = server.headers.map { Dictionary(uniqueKeysWithValues: $0.keys.map { ($0, "[redacted]") }) }
            return server
        }
    }
}
