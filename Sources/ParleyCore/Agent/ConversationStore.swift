import Foundation

/// Where conversations are kept between turns. Implementations: `InMemoryConversationStore`
/// here; a SQLite store in ParleyStore.
public protocol ConversationStore: Sendable {
    /// Appends `messages`, in order, to the conversation `conversationID` (created if new).
    func append(_ messages: [ChatMessage], to conversationID: String) async throws
    /// Every message of the conversation, oldest first; empty for an unknown conversation.
    func messages(in conversationID: String) async throws -> [ChatMessage]
    /// Replaces the last assistant message with what the listener heard before cutting it off
    /// (see `ChatMessage.interrupted(heardText:)`).
    /// - Returns: whether there was an assistant message to truncate.
    @discardableResult
    func truncateLastAssistantMessage(in conversationID: String, heardText: String) async throws -> Bool
}

extension ChatMessage {
    /// This message as stored after an interruption: for an assistant message, its text cut to
    /// `heardText` and marked interrupted (tool calls kept); other messages unchanged.
    public func interrupted(heardText: String) -> ChatMessage {
        guard case .assistant(_, let toolCalls, _) = self else { return self }
        return .assistant(text: heardText, toolCalls: toolCalls, interrupted: true)
    }

    /// Whether this is an assistant message.
    public var isAssistant: Bool {
        if case .assistant = self { return true }
        return false
    }
}
