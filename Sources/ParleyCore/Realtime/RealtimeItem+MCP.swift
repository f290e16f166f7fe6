import Foundation

extension RealtimeItem {
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
