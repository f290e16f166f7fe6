import Foundation
import ParleyCore

/// The `mcp_call` items of a session's responses: each call's item and place in its response,
/// and the approval request each approved call answers.
struct MCPCallItems {
    struct Call {
        var itemID: String
        var outputIndex: Int
        var serverLabel: String
        var approvalRequestID: String?
    }

    /// Calls in progress, by call id.
    var inProgress: [String: Call] = [:]
    /// The `mcp_approval_request` item of each call waiting for or given approval, by call id.
    var approvalRequests: [String: String] = [:]
}

extension RealtimeEventTranslator {
    /// An MCP call began: its item is added, its arguments streamed, and it is in progress.
    mutating func mcpCallStarted(responseID: String, call: ToolCall, serverLabel: String) -> [RealtimeServerEvent] {
        guard var state = responses[responseID] else { return [] }
        let itemID = RealtimeID.item()
        let outputIndex = state.output.count
        let approvalRequestID = mcpCalls.approvalRequests.removeValue(forKey: call.id)
        let item = RealtimeItem(id: itemID, kind: .mcpCall(
            serverLabel: serverLabel, name: call.name, arguments: "", approvalRequestID: approvalRequestID, output: nil, error: nil
        ))
        state.output.append(item)
        responses[responseID] = state
        mcpCalls.inProgress[call.id] = MCPCallItems.Call(
            itemID: itemID, outputIndex: outputIndex, serverLabel: serverLabel, approvalRequestID: approvalRequestID
        )
        var events: [RealtimeServerEvent] = [.responseOutputItemAdded(responseID: responseID, outputIndex: outputIndex, item: item)]
        if !state.request.isOutOfBand { events.append(.conversationItemAdded(item, previousItemID: nil)) }
        events += [
            .mcp(.callArgumentsDelta(responseID: responseID, itemID: itemID, outputIndex: outputIndex, delta: call.arguments)),
            .mcp(.callArgumentsDone(responseID: responseID, itemID: itemID, outputIndex: outputIndex, arguments: call.arguments)),
            .mcp(.callInProgress(itemID: itemID, outputIndex: outputIndex)),
        ]
        return events
    }

    /// An MCP call ended: completed with its output, or failed with the typed error its output
    /// carries. Nothing for other tools' calls.
    mutating func mcpCallFinished(responseID: String, call: ToolCall, output: String, isError: Bool) -> [RealtimeServerEvent] {
        guard let started = mcpCalls.inProgress.removeValue(forKey: call.id) else { return [] }
        let error = isError ? MCPFailure(toolOutput: output) ?? MCPFailure(.toolExecution, message: output) : nil
        let item = RealtimeItem(id: started.itemID, kind: .mcpCall(
            serverLabel: started.serverLabel, name: call.name, arguments: call.arguments,
            approvalRequestID: started.approvalRequestID, output: isError ? nil : output, error: error
        ))
        if var state = responses[responseID], started.outputIndex < state.output.count {
            state.output[started.outputIndex] = item
            responses[responseID] = state
        }
        var events: [RealtimeServerEvent] = [
            .mcp(isError ? .callFailed(itemID: started.itemID, outputIndex: started.outputIndex)
                : .callCompleted(itemID: started.itemID, outputIndex: started.outputIndex)),
            .responseOutputItemDone(responseID: responseID, outputIndex: started.outputIndex, item: item),
        ]
        if responses[responseID]?.request.isOutOfBand != true { events.append(.conversationItemDone(item, previousItemID: nil)) }
        return events
    }

    /// The model asked for an MCP call that waits for approval: an `mcp_approval_request` item,
    /// whose id the client's `mcp_approval_response` names.
    mutating func mcpApprovalRequested(
        responseID: String, itemID: String, call: ToolCall, serverLabel: String, previousItemID: String?
    ) -> [RealtimeServerEvent] {
        guard var state = responses[responseID] else { return [] }
        let outputIndex = state.output.count
        let item = RealtimeItem(id: itemID, kind: .mcpApprovalRequest(serverLabel: serverLabel, name: call.name, arguments: call.arguments))
        state.output.append(item)
        responses[responseID] = state
        mcpCalls.approvalRequests[call.id] = itemID
        if mcpCalls.approvalRequests.count > 64, let oldest = mcpCalls.approvalRequests.keys.first {
            mcpCalls.approvalRequests.removeValue(forKey: oldest)
        }
        var events: [RealtimeServerEvent] = [.responseOutputItemAdded(responseID: responseID, outputIndex: outputIndex, item: item)]
        if !state.request.isOutOfBand { events.append(.conversationItemAdded(item, previousItemID: previousItemID)) }
        events.append(.responseOutputItemDone(responseID: responseID, outputIndex: outputIndex, item: item))
        if !state.request.isOutOfBand { events.append(.conversationItemDone(item, previousItemID: previousItemID)) }
        return events
    }
}
