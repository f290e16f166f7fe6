import Foundation

/// One entry of the conversation as a person sees it: what they said or typed, what the agent
/// answered, a tool the agent used. Voice and typed entries share one list.
public struct ConversationMessage: Identifiable, Sendable, Hashable {
    /// Who the entry is from.
    public enum Role: String, Sendable, Hashable {
        /// The person.
        case user
        /// The agent.
        case agent
        /// A tool the agent ran (the text is the tool's name).
        case tool
    }

    /// How far the entry has got.
    public enum Status: String, Sendable, Hashable {
        /// The person's speech is being transcribed: the words may still change.
        case transcribing
        /// The agent's answer is still arriving, or the tool is still running.
        case streaming
        /// Final.
        case complete
        /// The agent was cut off; the text is what the listener heard.
        case interrupted
        /// The speech could not be transcribed, the utterance was not sent, or the tool failed.
        case failed
    }

    /// A stable identity for lists; a spoken entry keeps its local id after the server names
    /// its item.
    public let id: String
    /// The server's conversation item, once known.
    public internal(set) var itemID: String?
    /// Who the entry is from.
    public let role: Role
    /// Whether it was spoken (the person's voice, the agent's speech) rather than written.
    public internal(set) var isSpoken: Bool
    /// The words so far.
    public internal(set) var text: String
    /// How far it has got.
    public internal(set) var status: Status
    /// The agent response it belongs to (agent entries).
    public internal(set) var responseID: String?

    /// Creates an entry.
    public init(
        id: String, itemID: String?, role: Role, isSpoken: Bool, text: String, status: Status, responseID: String? = nil
    ) {
        self.id = id
        self.itemID = itemID
        self.role = role
        self.isSpoken = isSpoken
        self.text = text
        self.status = status
        self.responseID = responseID
    }
}
