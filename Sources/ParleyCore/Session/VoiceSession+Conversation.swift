import Foundation

// The conversation's items: adding, reading, deleting and truncating them, and the tool
// results kept outside a response.
extension VoiceSession {
    /// Where a new item goes.
    public enum ItemPlacement: Sendable, Hashable {
        /// After the last item.
        case end
        /// Before every other item (`previous_item_id: "root"`).
        case start
        /// Right after the item with this id.
        case after(String)
    }

    /// Adds a typed user message (or any other message) to the conversation.
    /// - Returns: the new item's id.
    @discardableResult
    public func addItem(_ message: ChatMessage, id: String? = nil, placement: ItemPlacement = .end) -> String {
        let itemID = id ?? IdentifierGenerator.make("item")
        switch placement {
        case .end: ledger.upsert(id: itemID, message: message)
        case .start: ledger.insertAtStart(id: itemID, message: message)
        case .after(let previousID): ledger.insert(id: itemID, message: message, after: previousID)
        }
        let previous = ledger.previousItemID(before: itemID)
        emit(.itemAdded(itemID: itemID, previousItemID: previous, message: message))
        emit(.itemCompleted(itemID: itemID, message: message))
        return itemID
    }

    /// What an item of the conversation holds right now.
    public enum ItemContent: Sendable, Hashable {
        /// The item's final message.
        case final(ChatMessage)
        /// The reply being written or spoken, with its text so far.
        case replyInProgress(text: String)
        /// Committed audio whose transcript is not known yet (or that transcribed to nothing).
        case inputWithoutTranscript
    }

    /// What the item `id` holds, `nil` when the conversation has no such item.
    public func content(ofItem id: String) -> ItemContent? {
        if let message = ledger.message(id: id) { return .final(message) }
        guard ledger.contains(id: id) else { return nil }
        if let text = responses.textInProgress(ofItem: id) { return .replyInProgress(text: text) }
        return .inputWithoutTranscript
    }

    /// Removes an item from the conversation.
    /// - Returns: whether the item existed.
    @discardableResult
    public func deleteItem(id: String) -> Bool {
        guard ledger.remove(id: id) else { return false }
        emit(.itemDeleted(itemID: id))
        return true
    }

    /// Cuts an assistant item to what the listener heard: `audioEndMs` of its audio.
    /// - Returns: `false` when the item is unknown or not an assistant message.
    @discardableResult
    public func truncate(itemID: String, audioEndMs: Int) -> Bool {
        providers.recorder?.cutAgent(itemID: itemID, afterMilliseconds: audioEndMs)
        guard let actions = responses.truncate(itemID: itemID, audioEndMs: audioEndMs, ledger: &ledger) else { return false }
        carryOut(actions)
        return true
    }

    /// Stores a tool result the session produced outside a response (a declined approval).
    func recordToolResult(_ message: ChatMessage, id itemID: String) {
        ledger.upsert(id: itemID, message: message, isInternal: true)
        emit(.itemCompleted(itemID: itemID, message: message))
    }

    /// Keeps the result of a call that finished after its response was interrupted, right
    /// after the call (and its other results), so the next turn's model sees both.
    func keepToolResult(_ result: ToolResult, of call: ToolCall) {
        guard !isClosed else { return }
        for item in ledger.keepLateToolResult(result, of: call) { emit(.itemCompleted(itemID: item.id, message: item.message)) }
    }
}
