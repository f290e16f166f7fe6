import Foundation
import ParleyCore

extension AgentDefinition {
    /// An agent this one may hand the conversation to: the model is offered a transfer tool
    /// (`transfer_to_<agent_id>`) described by `description`.
    public struct HandoffSpecification: Codable, Sendable, Hashable {
        public var agentID: String
        /// When to hand off, for the model (also the `reason` of `parley.handoff`).
        public var description: String?

        enum CodingKeys: String, CodingKey {
            case agentID = "agent_id", description
        }
    }

    /// What the agent taking over reads of the conversation (`handoff_history`): every item
    /// (`whole`), or one note summarising them, written by its model (`summary`).
    static let handoffHistories: Set<String> = ["whole", "summary"]

    /// Whether the agent taking over reads a summary instead of the items before the handoff.
    var summarizesHandoffHistory: Bool { handoffHistory == "summary" }

    /// Problems with `handoffs` and `handoff_history` that the definition alone shows, one line each.
    func handoffProblems() -> [String] {
        var problems: [String] = []
        var targets = Set<String>()
        for (index, handoff) in (handoffs ?? []).enumerated() {
            let prefix = "handoffs[\(index)]"
            if handoff.agentID.isEmpty || handoff.agentID.count > 200 { problems.append("\(prefix).agent_id: must be 1 to 200 characters") }
            if handoff.agentID == id { problems.append("\(prefix).agent_id: an agent cannot hand off to itself") }
            if !targets.insert(Self.transferToolName(to: handoff.agentID)).inserted {
                problems.append("\(prefix).agent_id: \"\(handoff.agentID)\" is named twice")
            }
            if let description = handoff.description, description.count > 1_000 {
                problems.append("\(prefix).description: at most 1000 characters")
            }
        }
        if let handoffHistory, !Self.handoffHistories.contains(handoffHistory) {
            problems.append("handoff_history: must be \"whole\" or \"summary\"")
        }
        return problems
    }

    /// The name of the tool that hands the conversation to `agentID`: `transfer_to_` and the id
    /// in lower case, every character but a-z, 0-9 and _ made `_`.
    static func transferToolName(to agentID: String) -> String {
        "transfer_to_" + String(agentID.lowercased().unicodeScalars.map { scalar in
            ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_" ? Character(scalar) : "_"
        })
    }
}
