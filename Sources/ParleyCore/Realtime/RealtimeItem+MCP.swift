import Foundation

extension RealtimeItem {
    /// Decodes the members of an `mcp_…` item of `type` (clients create only
    /// `mcp_approval_response`; the others come from a server, for `ParleyClient`).
    static func decodeMCPKind(_ type: String, _ reader: RealtimeJSONReader) throws(RealtimeProtocolError) -> Kind {
        switch type {
        case "mcp_approval_response":
            guard let requestID = try decodeID(reader, key: "approval_request_id") else { throw .missing(reader.path(of: "approval_request_id")) }
            guard let approve = try reader.bool("approve") else { throw .missing(reader.path(of: "approve")) }
            return .mcpApprovalResponse(approvalRequestID: requestID, approve: approve, reason: try reader.string("reason"))
        case "mcp_approval_request":
            return .mcpApprovalRequest(
                serverLabel: try reader.requiredString("server_label"), name: try reader.requiredString("name"),
                arguments: try reader.string("arguments") ?? ""
            )
        case "mcp_call":
            let error = try reader.object("error").map { error throws(RealtimeProtocolError) in
                MCPFailure(
                    MCPFailure.Kind(rawValue: try error.string("type") ?? "") ?? .toolExecution,
                    code: try error.int("code", in: Int.min...Int.max), message: try error.string("message") ?? ""
                )
            }
            return .mcpCall(
                serverLabel: try reader.requiredString("server_label"), name: try reader.requiredString("name"),
                arguments: try reader.string("arguments") ?? "", approvalRequestID: try reader.string("approval_request_id"),
                output: try reader.string("output"), error: error
            )
        default:
            var tools: [MCPToolDescription] = []
            for tool in try reader.objects("tools") ?? [] {
                tools.append(MCPToolDescription(
                    name: try tool.requiredString("name"), description: try tool.string("description"),
                    inputSchema: tool.member("input_schema") ?? .object([:]), annotations: tool.member("annotations")
                ))
            }
            return .mcpListTools(serverLabel: try reader.requiredString("server_label"), tools: tools)
        }
    }

    /// Writes the members of an `mcp_…` item after its `id` and `type`, as OpenAI's models have them.
    func writeMCPMembers(to writer: inout RealtimeJSONWriter) {
        switch kind {
        case .mcpListTools(let label, let tools):
            writer.field("server_label", label)
            writer.array("tools") { array in
                for tool in tools {
                    array.elementObject { object in
                        object.field("name", tool.name)
                        object.field("description", ifPresent: tool.description)
                        object.field("input_schema", tool.inputSchema)
                        if let annotations = tool.annotations { object.field("annotations", annotations) }
                    }
                }
            }
        case .mcpCall(let label, let name, let arguments, let approvalRequestID, let output, let error):
            writer.field("server_label", label)
            writer.field("name", name)
            writer.field("arguments", arguments)
            writer.field("approval_request_id", orNull: approvalRequestID)
            writer.field("output", orNull: output)
            if let error {
                writer.object("error") { object in
                    object.field("type", error.kind.rawValue)
                    if error.kind != .toolExecution { object.field("code", error.code ?? 0) }
                    object.field("message", error.message)
                }
            } else {
                writer.nullField("error")
            }
        case .mcpApprovalRequest(let label, let name, let arguments):
            writer.field("server_label", label)
            writer.field("name", name)
            writer.field("arguments", arguments)
        case .mcpApprovalResponse(let requestID, let approve, let reason):
            writer.field("approval_request_id", requestID)
            writer.field("approve", approve)
            writer.field("reason", ifPresent: reason)
        case .message, .functionCall, .functionCallOutput:
            break
        }
    }
}
