import Foundation

/// The conversation a session holds: its items in the order the client was told about them,
/// each with the message the language model sees.
///
/// An item takes its place when it is announced (a committed turn still being transcribed, a
/// reply still being spoken) and gets its message when it completes; until then it is only a
/// position, so every `previous_item_id` a client was given can be referred to, and the model
/// never reads half a message. Items a server-side tool step produced are kept for the model
/// but are never announced, so they are skipped when naming the previous item.
///
/// It keeps the most recent `capacity` items, several times what the language model's window
/// takes, so a session that runs for hours does not grow; older items stay in the store.
public struct ConversationLedger: Sendable, Hashable {
    /// How many of the most recent items are kept.
    public static let capacity = 256

    /// One item of the conversation.
    public struct Item: Sendable, Hashable {
        /// The realtime item id.
        public var id: String
        /// The message as the model sees it; `nil` while the item's content is not final.
        public var message: ChatMessage?
        /// Whether the client was never told about the item (a server-side tool step).
        public var isInternal: Bool

        /// Creates an item.
        public init(id: String, message: ChatMessage?, isInternal: Bool = false) {
            self.id = id
            self.message = message
            self.isInternal = isInternal
        }
    }

    /// The items, oldest first.
    public private(set) var items: [Item]

    /// Creates a ledger holding `items` (a resumed conversation) or nothing.
    public init(items: [Item] = []) { self.items = items }

    /// The messages for the language model: every item with final content.
    public var messages: [ChatMessage] { items.compactMap(\.message) }

    /// The id of the last item the client knows of, for `previous_item_id`.
    public var lastItemID: String? { items.last { !$0.isInternal }?.id }

    /// Whether an item with this id is in the conversation (final or not).
    public func contains(id: String) -> Bool { items.contains { $0.id == id } }

    /// The message of an item, `nil` when the item is unknown or not final yet.
    public func message(id: String) -> ChatMessage? { items.first { $0.id == id }?.message }

    /// Sets the message of an item with this id, or appends a new item.
    public mutating func upsert(id: String, message: ChatMessage, isInternal: Bool = false) {
        if let index = items.firstIndex(where: { $0.id == id }) {
            items[index].message = message
        } else {
            items.append(Item(id: id, message: message, isInternal: isInternal))
            dropOldest()
        }
    }

    /// Takes the next place for an announced item whose content is not final yet.
    public mutating func reserve(id: String) {
        guard !contains(id: id) else { return }
        items.append(Item(id: id, message: nil))
        dropOldest()
    }

    /// Inserts an item after `previousID` (at the end when `nil` or unknown).
    public mutating func insert(id: String, message: ChatMessage, after previousID: String?, isInternal: Bool = false) {
        guard let previousID, let index = items.firstIndex(where: { $0.id == previousID }) else {
            upsert(id: id, message: message, isInternal: isInternal)
            return
        }
        items.insert(Item(id: id, message: message, isInternal: isInternal), at: index + 1)
        dropOldest()
    }

    /// Inserts an item at the start of the conversation (`previous_item_id: "root"`).
    public mutating func insertAtStart(id: String, message: ChatMessage) {
        items.insert(Item(id: id, message: message), at: 0)
        dropOldest()
    }

    private mutating func dropOldest() {
        if items.count > Self.capacity { items.removeFirst(items.count - Self.capacity) }
    }

    /// Removes an item; returns whether it existed.
    @discardableResult
    public mutating func remove(id: String) -> Bool {
        guard let index = items.firstIndex(where: { $0.id == id }) else { return false }
        items.remove(at: index)
        return true
    }

    /// The id of the item before `id` that the client knows of, `nil` at the start.
    public func previousItemID(before id: String) -> String? {
        guard let index = items.firstIndex(where: { $0.id == id }) else { return nil }
        return items[..<index].last { !$0.isInternal }?.id
    }
    /// Keeps the result of a tool call that finished after its response was interrupted, right
    /// after the call (and its other results), so the next turn's model sees both; a call that
    /// was not stored before the interruption is stored with it. Both are internal items.
    /// - Returns: the items stored, in order.
    mutating func keepLateToolResult(_ result: ToolResult, of call: ToolCall) -> [(id: String, message: ChatMessage)] {
        var stored: [(id: String, message: ChatMessage)] = []
        var previousID: String?
        if var last = items.firstIndex(where: { item in
            if case .assistant(_, let calls, _)? = item.message { calls.contains { $0.id == call.id } } else { false }
        }) {
            while last + 1 < items.count, case .tool? = items[last + 1].message { last += 1 }
            previousID = items[last].id
        }
        if previousID == nil {
            let callItemID = IdentifierGenerator.make("item")
            let callMessage = ChatMessage.assistant(text: "", toolCalls: [call])
            upsert(id: callItemID, message: callMessage, isInternal: true)
            stored.append((callItemID, callMessage))
            previousID = callItemID
        }
        let itemID = IdentifierGenerator.make("item")
        let message = ChatMessage.tool(callID: call.id, content: result.output)
        insert(id: itemID, message: message, after: previousID, isInternal: true)
        stored.append((itemID, message))
        return stored
    }
}
