import Foundation

extension RealtimeItem {
    /// The longest item or call id accepted from a client.
    static let maximumIDLength = 128

    /// The item as compact JSON in `dialect`.
    public func jsonText(dialect: RealtimeDialect) -> String {
        RealtimeJSONWriter.object { write(to: &$0, dialect: dialect) }
    }

    /// Decodes an item object of either dialect.
    /// - Throws: `RealtimeProtocolError` naming the offending field.
    public init(jsonText: String) throws(RealtimeProtocolError) {
        let value: JSONValue
        switch RealtimeJSONParser.parse(jsonText) {
        case .success(let parsed): value = parsed
        case .failure(let failure): throw .invalidJSON(String(describing: failure))
        }
        try self.init(decoding: try RealtimeJSONReader(value, path: "item"))
    }

    /// Writes the item's members (`id`, `object`, `type`, `status`, …) in `dialect`.
    func write(to writer: inout RealtimeJSONWriter, dialect: RealtimeDialect) {
        writer.field("id", ifPresent: id)
        guard !isMCP else {
            writer.field("type", typeName)
            writeMCPMembers(to: &writer)
            return
        }
        writer.field("object", "realtime.item")
        writer.field("type", typeName)
        writer.field("status", ifPresent: status?.rawValue)
        switch kind {
        case .message(let role, let content):
            writer.field("role", role.rawValue)
            writer.array("content") { array in
                for part in content {
                    array.elementObject { part.write(to: &$0, dialect: dialect) }
                }
            }
        case .functionCall(let callID, let name, let arguments):
            writer.field("call_id", callID)
            writer.field("name", name)
            writer.field("arguments", arguments)
        case .functionCallOutput(let callID, let output):
            writer.field("call_id", callID)
            writer.field("output", output)
        case .mcpListTools, .mcpCall, .mcpApprovalRequest, .mcpApprovalResponse:
            break
        }
    }

    /// Decodes an item, accepting both dialects' content part names. An item without `type`
    /// but with a `role` is a message.
    init(decoding reader: RealtimeJSONReader) throws(RealtimeProtocolError) {
        let id = try Self.decodeID(reader, key: "id")
        let status: RealtimeItemStatus?
        if let statusName = try reader.string("status") {
            guard let known = RealtimeItemStatus(rawValue: statusName) else {
                throw .invalidValue(reader.path(of: "status"), "\(quotedExcerpt(statusName)) is not an item status.")
            }
            status = known
        } else {
            status = nil
        }
        let type = try reader.string("type") ?? (reader.contains("role") ? "message" : nil)
        let kind: Kind
        switch type {
        case "message"?:
            let roleName = try reader.requiredString("role")
            guard let role = RealtimeRole(rawValue: roleName) else {
                throw .invalidValue(reader.path(of: "role"), "\(quotedExcerpt(roleName)) is not a role; use 'user', 'assistant' or 'system'.")
            }
            var content: [RealtimeContentPart] = []
            for part in try reader.objects("content") ?? [] {
                content.append(try RealtimeContentPart(decoding: part))
            }
            kind = .message(role: role, content: content)
        case "function_call"?:
            kind = .functionCall(
                callID: try Self.decodeID(reader, key: "call_id") ?? RealtimeID.call(),
                name: try reader.requiredString("name"),
                arguments: try reader.string("arguments") ?? ""
            )
        case "function_call_output"?:
            guard let callID = try Self.decodeID(reader, key: "call_id") else { throw .missing(reader.path(of: "call_id")) }
            kind = .functionCallOutput(callID: callID, output: try reader.requiredString("output"))
        case "mcp_approval_response"?, "mcp_approval_request"?, "mcp_call"?, "mcp_list_tools"?:
            kind = try Self.decodeMCPKind(type!, reader)
        case nil:
            throw .missing(reader.path(of: "type"))
        case let other?:
            throw .unsupported(
                reader.path(of: "type"),
                "\(quotedExcerpt(other)) items are not supported; use 'message', 'function_call', 'function_call_output' or 'mcp_approval_response'."
            )
        }
        self.init(id: id, status: status, kind: kind)
    }

    /// Decodes an id: a non-empty string of at most `maximumIDLength` bytes.
    static func decodeID(_ reader: RealtimeJSONReader, key: String) throws(RealtimeProtocolError) -> String? {
        guard let id = try reader.string(key) else { return nil }
        guard (1...maximumIDLength).contains(id.utf8.count) else {
            throw .invalidValue(reader.path(of: key), "an id must be 1–\(maximumIDLength) bytes long.")
        }
        return id
    }
}

extension RealtimeContentPart {
    /// The part's `type` inside an item in `dialect`.
    func typeName(dialect: RealtimeDialect) -> String {
        switch self {
        case .inputText: "input_text"
        case .inputAudio: "input_audio"
        case .inputImage: "input_image"
        case .outputText: dialect == .ga ? "output_text" : "text"
        case .outputAudio: dialect == .ga ? "output_audio" : "audio"
        }
    }

    /// Writes the part as content of an item in `dialect`.
    func write(to writer: inout RealtimeJSONWriter, dialect: RealtimeDialect) {
        writeMembers(typeName: typeName(dialect: dialect), to: &writer)
    }

    /// Writes the part as the `part` of `response.content_part.added/done`, which both
    /// dialects call `text` or `audio`.
    func writeAsResponsePart(to writer: inout RealtimeJSONWriter) {
        writeMembers(typeName: typeName(dialect: .beta), to: &writer)
    }

    private func writeMembers(typeName: String, to writer: inout RealtimeJSONWriter) {
        writer.field("type", typeName)
        switch self {
        case .inputText(let text), .outputText(let text):
            writer.field("text", text)
        case .inputAudio(let audio, let transcript), .outputAudio(let audio, let transcript):
            writer.field("audio", ifPresent: audio)
            writer.field("transcript", orNull: transcript)
        case .inputImage(let url):
            writer.field("image_url", url)
        }
    }

    /// Decodes a content part of either dialect.
    init(decoding reader: RealtimeJSONReader) throws(RealtimeProtocolError) {
        let type = try reader.requiredString("type")
        switch type {
        case "input_text": self = .inputText(try reader.requiredString("text"))
        case "output_text", "text": self = .outputText(try reader.requiredString("text"))
        case "input_audio": self = .inputAudio(audio: try reader.string("audio"), transcript: try reader.string("transcript"))
        case "output_audio", "audio": self = .outputAudio(audio: try reader.string("audio"), transcript: try reader.string("transcript"))
        case "input_image": self = .inputImage(url: try reader.requiredString("image_url"))
        default:
            throw .unsupported(reader.path(of: "type"), "\(quotedExcerpt(type)) content is not supported.")
        }
    }
}
