import Foundation
import ParleyCore

/// A stored agent: its id and its configuration document (owned by the server's schema).
public struct AgentRecord: Sendable, Hashable {
    public var id: String
    public var document: JSONValue
    public var createdAt: Date
    public var updatedAt: Date

    /// Creates an agent record.
    public init(id: String, document: JSONValue, createdAt: Date, updatedAt: Date) {
        self.id = id
        self.document = document
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// A running or finished instance of an agent for one user.
public struct InstanceRecord: Sendable, Hashable {
    public var id: String
    public var agentID: String
    public var userID: String
    public var conversationID: String
    /// `waiting`, `listening`, `thinking`, `speaking` or `ended`.
    public var status: String
    public var createdAt: Date
    /// The agent holding the instance since a handoff; `nil` while `agentID` does.
    public var currentAgentID: String?

    /// Creates an instance record.
    public init(
        id: String, agentID: String, userID: String, conversationID: String, status: String, createdAt: Date, currentAgentID: String? = nil
    ) {
        self.currentAgentID = currentAgentID
        self.id = id
        self.agentID = agentID
        self.userID = userID
        self.conversationID = conversationID
        self.status = status
        self.createdAt = createdAt
    }
}

/// One completed item of a conversation: a final user transcript, an assistant message as
/// heard, a tool call or a tool result.
public struct ItemRecord: Sendable, Hashable {
    /// The realtime item id (`item_…`).
    public var id: String
    public var conversationID: String
    /// The message as the language model sees it.
    public var message: ChatMessage
    public var createdAt: Date
    /// The agent that held the session when the item completed (agents hand conversations to
    /// each other); `nil` for items stored before handoffs existed.
    public var agentID: String?

    /// The words said or written in the item — the user's text, the assistant's, a tool's
    /// call and result — lowercased, with everything but letters and digits turned into single
    /// spaces and one space on either side (` my bill is wrong `): what a transcript search
    /// (`CallQuery.transcriptWords`) matches.
    public var searchableWords: String { Self.searchableWords(of: message) }

    /// The words said or written in `message`, as `searchableWords` gives them.
    public static func searchableWords(of message: ChatMessage) -> String {
        let text: String
        switch message {
        case .system(let instructions): text = instructions
        case .user(let parts): text = parts.compactMap { if case .text(let text) = $0 { text } else { nil } }.joined(separator: " ")
        case .assistant(let said, let calls, _): text = ([said] + calls.map { "\($0.name) \($0.arguments)" }).joined(separator: " ")
        case .tool(_, let content): text = content
        }
        return " " + Self.words(of: text).joined(separator: " ") + " "
    }

    /// `text` lowercased and cut into runs of letters and digits.
    public static func words(of text: String) -> [String] {
        text.lowercased().split { !$0.isLetter && !$0.isNumber }.map(String.init)
    }

    /// Creates an item record.
    public init(id: String, conversationID: String, message: ChatMessage, createdAt: Date, agentID: String? = nil) {
        self.agentID = agentID
        self.id = id
        self.conversationID = conversationID
        self.message = message
        self.createdAt = createdAt
    }
}
