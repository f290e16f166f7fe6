import Foundation

/// The conversation a session holds: its items in order, each with the message the language
/// model sees. Items are added when they complete.
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
        /// The message as the model sees it.
        public var message: ChatMessage

        /// Creates an item.
        public init(id: String, message: ChatMessage) {
            self.id = id
            self.message = message
        }
    }

    /// The items, oldest first.
    public private(set) var items: [Item]

    /// Creates a ledger holding `items` (a resumed conversation) or nothing.
    public init(items: [Item] = []) { self.items = items }

    /// The messages for the language model.
    public var messages: [ChatMessage] { items.map(\.message) }

    /// The id of the last item, for `previous_item_id`.
    public var lastItemID: String? { items.last?.id }

    /// Appends an item, or replaces the message of an item with the same id.
    public mutating func upsert(id: String, message: ChatMessage) {
        if let index = items.firstIndex(where: { $0.id == id }) {
            items[index].message = message
        } else {
            items.append(Item(id: id, message: message))
            dropOldest()
        }
    }

    /// Inserts an item after `previousID` (at the end when `nil` or unknown).
    public mutating func insert(id: String, message: ChatMessage, after previousID: String?) {
        guard let previousID, let index = items.firstIndex(where: { $0.id == previousID }) else {
            upsert(id: id, message: message)
            return
        }
        items.insert(Item(id: id, message: message), at: index + 1)
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

    /// The message of an item.
    public func message(id: String) -> ChatMessage? { items.first { $0.id == id }?.message }
}
