import Foundation
import ParleyCore
import ParleyStore

/// A conversation's items as the console shows them: each agent item with the agent that
/// spoke it, marked where the conversation was handed from one agent to another, and with the
/// filler line it holds, if any (fillers are stored as part of what the agent said).
enum ConsoleTranscript {
    /// An item with who spoke it.
    struct Item: Encodable {
        var item: InstanceRoutes.ItemList.Item
        /// The name of the agent that spoke it (`agent_id`'s), when that agent still exists.
        var agentName: String?
        /// The agent that held the conversation before this item's: a handoff happened here.
        var handoffFrom: String?
        /// That agent's name, when it still exists.
        var handoffFromName: String?
        /// The filler line the agent said in this item, word for word as stored.
        var filler: String?

        func encode(to encoder: any Encoder) throws {
            try item.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(agentName, forKey: .agentName)
            try container.encodeIfPresent(handoffFrom, forKey: .handoffFrom)
            try container.encodeIfPresent(handoffFromName, forKey: .handoffFromName)
            try container.encodeIfPresent(filler, forKey: .filler)
        }

        enum CodingKeys: String, CodingKey { case agentName = "agent_name", handoffFrom = "handoff_from", handoffFromName = "handoff_from_name", filler }
    }

    /// The items of a conversation that began with `firstAgentID`, with `agents` (by id) the
    /// definitions of the agents that spoke in it.
    static func items(_ records: [ItemRecord], firstAgentID: String?, agents: [String: AgentDefinition]) -> [Item] {
        var holder = firstAgentID
        return records.map { record in
            var item = Item(item: InstanceRoutes.listItem(record))
            guard let agentID = record.agentID else { return item }
            if let previous = holder, previous != agentID {
                item.handoffFrom = previous
                item.handoffFromName = agents[previous]?.name
            }
            holder = agentID
            let agent = agents[agentID]
            item.agentName = agent?.name
            if case .assistant(let text, _, _) = record.message, let agent {
                let line = agent.fillerLine ?? AgentOptions().fillerLine
                if !line.isEmpty, agent.fillerDelayMs != 0, text.contains(line) { item.filler = line }
            }
            return item
        }
    }
}
