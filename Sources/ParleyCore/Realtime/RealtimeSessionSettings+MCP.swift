import Foundation

extension RealtimeSessionSettings {
    /// The `{"type": "mcp", …}` entries of `tools`, `nil` when there are none (a `tools` array
    /// without them still clears the session's MCP servers: it replaces every tool).
    static func decodeMCPServers(_ reader: RealtimeJSONReader) throws(RealtimeProtocolError) -> [MCPServerConfiguration]? {
        guard let readers = try reader.objects("tools") else { return nil }
        var servers: [MCPServerConfiguration] = []
        for toolReader in readers where try toolReader.string("type") == "mcp" {
            let server = try MCPServerConfiguration(decoding: toolReader)
            guard !servers.contains(where: { $0.label == server.label }) else {
                throw .invalidValue(toolReader.path(of: "server_label"), "\(quotedExcerpt(server.label)) names two MCP servers; labels must be unique.")
            }
            servers.append(server)
        }
        return servers.isEmpty ? nil : servers
    }
}

extension MCPServerConfiguration {
    /// Decodes OpenAI's MCP tool: `server_label`, `server_url`, `authorization`, `headers`,
    /// `allowed_tools`, `require_approval` (other members are ignored; `connector_id` is refused).
    init(decoding reader: RealtimeJSONReader) throws(RealtimeProtocolError) {
        let label = try reader.requiredString("server_label")
        let isValidLabel = (1...64).contains(label.utf8.count) && label.unicodeScalars.allSatisfy {
            ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || $0 == "_" || $0 == "-"
        }
        guard isValidLabel else {
            throw .invalidValue(reader.path(of: "server_label"), "\(quotedExcerpt(label)) must be 1–64 letters, digits, '_' or '-'.")
        }
        if reader.contains("connector_id") || reader.contains("tunnel_id") {
            throw .unsupported(reader.path(of: "connector_id"), "OpenAI's connectors and tunnels are not available here; give the MCP server's server_url.")
        }
        let urlText = try reader.requiredString("server_url")
        guard urlText.utf8.count <= 2048, let url = URL(string: urlText), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
            throw .invalidValue(reader.path(of: "server_url"), "server_url must be an http(s) URL.")
        }
        let token = try reader.string("authorization")
        let headers = try reader.stringMap("headers") ?? [:]
        guard headers.count <= 32, headers.allSatisfy({ Self.isHeaderSafe($0.key) && Self.isHeaderSafe($0.value) }) else {
            throw .invalidValue(reader.path(of: "headers"), "at most 32 headers, with no line breaks in names or values.")
        }
        guard token.map(Self.isHeaderSafe) ?? true else {
            throw .invalidValue(reader.path(of: "authorization"), "the token must not contain line breaks.")
        }
        self.init(
            label: label, url: url, authorization: token, headers: headers,
            allowedTools: try Self.decodeAllowedTools(reader), requireApproval: try Self.decodeApproval(reader)
        )
    }

    /// Writes the server as a session's tool, without `authorization` and `headers`: those
    /// are secrets, never shown to clients.
    func write(to writer: inout RealtimeJSONWriter) {
        writer.field("type", "mcp")
        writer.field("server_label", label)
        writer.field("server_url", url.absoluteString)
        if let allowedTools { writer.object("allowed_tools") { allowedTools.write(to: &$0) } }
        switch requireApproval {
        case .always: writer.field("require_approval", "always")
        case .never: writer.field("require_approval", "never")
        case .filter(let always, let never):
            writer.object("require_approval") { object in
                if let always { object.object("always") { always.write(to: &$0) } }
                if let never { object.object("never") { never.write(to: &$0) } }
            }
        }
    }

    private static func isHeaderSafe(_ text: String) -> Bool {
        // Scalars, not characters: "\r\n" is one Character, equal to neither "\r" nor "\n".
        text.utf8.count <= 8192 && !text.unicodeScalars.contains { $0 == "\r" || $0 == "\n" || $0 == "\0" }
    }

    private static func decodeAllowedTools(_ reader: RealtimeJSONReader) throws(RealtimeProtocolError) -> MCPToolFilter? {
        switch reader.member("allowed_tools") {
        case nil, .null?: return nil
        case .array?: return MCPToolFilter(toolNames: try reader.strings("allowed_tools"))
        case .object?: return try reader.object("allowed_tools").map(MCPToolFilter.init(decoding:))
        case let other?: throw .invalidValue(reader.path(of: "allowed_tools"), "expected a list of tool names or a filter, got \(other.kindName).")
        }
    }

    private static func decodeApproval(_ reader: RealtimeJSONReader) throws(RealtimeProtocolError) -> MCPApprovalPolicy {
        switch reader.member("require_approval") {
        case nil, .null?, .string("always")?: return .always
        case .string("never")?: return .never
        case .object?:
            let filter = try reader.object("require_approval")!
            return .filter(
                always: try filter.object("always").map(MCPToolFilter.init(decoding:)),
                never: try filter.object("never").map(MCPToolFilter.init(decoding:))
            )
        case let other?:
            throw .invalidValue(reader.path(of: "require_approval"), "expected 'always', 'never' or a filter, got \(other.kindName).")
        }
    }
}

extension MCPToolFilter {
    /// Decodes `{tool_names, read_only}`.
    init(decoding reader: RealtimeJSONReader) throws(RealtimeProtocolError) {
        self.init(toolNames: try reader.strings("tool_names"), readOnly: try reader.bool("read_only"))
    }

    func write(to writer: inout RealtimeJSONWriter) {
        if let toolNames { writer.field("tool_names", toolNames) }
        if let readOnly { writer.field("read_only", readOnly) }
    }
}
