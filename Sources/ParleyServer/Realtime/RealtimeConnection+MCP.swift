import Foundation
import ParleyCore

extension RealtimeConnection {
    /// Connects the session to `servers` (the agent's and the session's MCP servers), in the
    /// background: each new server's tools are listed into an `mcp_list_tools` item, and the
    /// agent gets them as soon as the list is in. Updates run one after another.
    func useMCPServers(_ servers: [MCPToolbox.Server]) {
        let previous = mcpUpdate
        mcpUpdate = Task {
            await previous?.value
            let labels = await mcpToolbox.use(servers) { [weak self] label in await self?.listMCPTools(label) }
            for label in labels { await listMCPTools(label) }
            if labels.isEmpty { await publishMCPTools() }
        }
    }

    /// Lists one server's tools (again), announcing it with `mcp_list_tools` events.
    func listMCPTools(_ label: String) async {
        let itemID = RealtimeID.item()
        send(.conversationItemAdded(RealtimeItem(id: itemID, kind: .mcpListTools(serverLabel: label, tools: [])), previousItemID: nil))
        send(.mcp(.listToolsInProgress(itemID: itemID)))
        let listing = await mcpToolbox.list(label)
        switch listing.outcome {
        case .success(let tools):
            send(.mcp(.listToolsCompleted(itemID: itemID)))
            send(.conversationItemDone(RealtimeItem(id: itemID, kind: .mcpListTools(serverLabel: label, tools: tools)), previousItemID: nil))
        case .failure(let failure):
            send(.mcp(.listToolsFailed(itemID: itemID)))
            send(.conversationItemDone(RealtimeItem(id: itemID, kind: .mcpListTools(serverLabel: label, tools: [])), previousItemID: nil))
            send(.error(RealtimeProtocolError(type: "server_error", code: "mcp_list_tools_failed", message: failure.message)))
        }
        await publishMCPTools()
    }

    /// Gives the session the tools of every listed server.
    func publishMCPTools() async {
        translator.mcpServerLabels = await mcpToolbox.serverLabels
        await session.useSessionTools(await mcpToolbox.tools, approvalRequired: await mcpToolbox.toolsRequiringApproval)
    }

    /// Takes the client's `mcp_approval_response` item: the approved call runs in the next
    /// response, a declined one is reported to the model.
    func answerApproval(_ item: RealtimeItem, approvalRequestID: String, approve: Bool, reason: String?, eventID: String?) async {
        var answer = item
        answer.id = item.id ?? RealtimeID.item()
        guard await session.answerApproval(requestItemID: approvalRequestID, responseItemID: answer.id!, approve: approve, reason: reason) else {
            reportError(RealtimeProtocolError(
                code: "item_not_found", message: "No unanswered MCP approval request \(approvalRequestID) in the conversation.",
                param: "item.approval_request_id", eventID: eventID
            ))
            return
        }
        send(.conversationItemAdded(answer, previousItemID: nil))
        send(.conversationItemDone(answer, previousItemID: nil))
    }
}
