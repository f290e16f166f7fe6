import ParleyCore

/// `transfer_to_<agent>`: the model hands the conversation to another agent of its definition's
/// `handoffs`. The result tells it the handoff is done (the agent taking over answers next) or,
/// as an error, why it was refused.
struct TransferToAgentTool: Tool {
    let source: AgentDefinition
    let handoff: AgentDefinition.HandoffSpecification
    let handoffs: SessionHandoffs

    var name: String { AgentDefinition.transferToolName(to: handoff.agentID) }
    var description: String {
        handoff.description.map { "Hand the conversation to the agent \(handoff.agentID): \($0)" }
            ?? "Hand the conversation to the agent \(handoff.agentID)."
    }
    var parameters: JSONValue { ["type": "object", "properties": [:]] }

    func call(arguments: JSONValue) async throws -> String {
        try await handoffs.transfer(from: source, to: handoff)
    }
}
