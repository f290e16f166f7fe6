import Foundation

/// A `ConversationStore` that keeps everything in memory, for tests and single-process use.
public actor InMemoryConversationStore: ConversationStore {
    private var conversations: [String: [ChatMessage]] = [:]

    /// Creates an empty store.
    public init() {}

    public func append(_ messages: [ChatMessage], to conversationID: String) {
        conversations[conversationID, default: []].append(contentsOf: messages)
    }

    public func messages(in conversationID: String) -> [ChatMessage] {
        conversations[conversationID] ?? []
    }

    @discardableResult
    public func truncateLastAssistantMessage(in conversationID: String, heardText: String) -> Bool {
        guard var messages = conversations[conversationID],
              let index = messages.lastIndex(where: \.isAssistant) else { return false }
        messages[index] = messages[index].interrupted(heardText: heardText)
        conversations[conversationID] = messages
        return true
    }
}
