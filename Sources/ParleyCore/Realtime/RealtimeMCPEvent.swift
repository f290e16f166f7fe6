import Foundation

/// The realtime server events about MCP tools (GA only; the beta API has none).
public enum RealtimeMCPEvent: Sendable, Hashable {
    /// `mcp_list_tools.in_progress`: the server's tools are being listed into item `itemID`.
    case listToolsInProgress(itemID: String)
    /// `mcp_list_tools.completed`.
    case listToolsCompleted(itemID: String)
    /// `mcp_list_tools.failed`.
    case listToolsFailed(itemID: String)
    /// `response.mcp_call_arguments.delta`.
    case callArgumentsDelta(responseID: String, itemID: String, outputIndex: Int, delta: String)
    /// `response.mcp_call_arguments.done`.
    case callArgumentsDone(responseID: String, itemID: String, outputIndex: Int, arguments: String)
    /// `response.mcp_call.in_progress`: the call was sent to the server.
    case callInProgress(itemID: String, outputIndex: Int)
    /// `response.mcp_call.completed`.
    case callCompleted(itemID: String, outputIndex: Int)
    /// `response.mcp_call.failed`.
    case callFailed(itemID: String, outputIndex: Int)

    /// The event's `type`.
    public var typeName: String {
        switch self {
        case .listToolsInProgress: "mcp_list_tools.in_progress"
        case .listToolsCompleted: "mcp_list_tools.completed"
        case .listToolsFailed: "mcp_list_tools.failed"
        case .callArgumentsDelta: "response.mcp_call_arguments.delta"
        case .callArgumentsDone: "response.mcp_call_arguments.done"
        case .callInProgress: "response.mcp_call.in_progress"
        case .callCompleted: "response.mcp_call.completed"
        case .callFailed: "response.mcp_call.failed"
        }
    }

    /// Decodes the event of `type`, `nil` when `type` is not an MCP event.
    init?(type: String, _ reader: RealtimeJSONReader) throws(RealtimeProtocolError) {
        switch type {
        case "mcp_list_tools.in_progress": self = .listToolsInProgress(itemID: try reader.requiredString("item_id"))
        case "mcp_list_tools.completed": self = .listToolsCompleted(itemID: try reader.requiredString("item_id"))
        case "mcp_list_tools.failed": self = .listToolsFailed(itemID: try reader.requiredString("item_id"))
        case "response.mcp_call_arguments.delta", "response.mcp_call_arguments.done":
            let responseID = try reader.requiredString("response_id"), itemID = try reader.requiredString("item_id")
            let outputIndex = try reader.requiredInt("output_index")
            self = type.hasSuffix("delta")
                ? .callArgumentsDelta(responseID: responseID, itemID: itemID, outputIndex: outputIndex, delta: try reader.requiredString("delta"))
                : .callArgumentsDone(responseID: responseID, itemID: itemID, outputIndex: outputIndex, arguments: try reader.requiredString("arguments"))
        case "response.mcp_call.in_progress", "response.mcp_call.completed", "response.mcp_call.failed":
            let itemID = try reader.requiredString("item_id"), outputIndex = try reader.requiredInt("output_index")
            switch type {
            case "response.mcp_call.in_progress": self = .callInProgress(itemID: itemID, outputIndex: outputIndex)
            case "response.mcp_call.completed": self = .callCompleted(itemID: itemID, outputIndex: outputIndex)
            default: self = .callFailed(itemID: itemID, outputIndex: outputIndex)
            }
        default:
            return nil
        }
    }

    /// Writes the members after `type` and `event_id`.
    func write(to writer: inout RealtimeJSONWriter) {
        switch self {
        case .listToolsInProgress(let itemID), .listToolsCompleted(let itemID), .listToolsFailed(let itemID):
            writer.field("item_id", itemID)
        case .callArgumentsDelta(let responseID, let itemID, let outputIndex, let delta):
            writer.field("response_id", responseID)
            writer.field("item_id", itemID)
            writer.field("output_index", outputIndex)
            writer.field("delta", delta)
        case .callArgumentsDone(let responseID, let itemID, let outputIndex, let arguments):
            writer.field("response_id", responseID)
            writer.field("item_id", itemID)
            writer.field("output_index", outputIndex)
            writer.field("arguments", arguments)
        case .callInProgress(let itemID, let outputIndex), .callCompleted(let itemID, let outputIndex), .callFailed(let itemID, let outputIndex):
            writer.field("item_id", itemID)
            writer.field("output_index", outputIndex)
        }
    }
}
