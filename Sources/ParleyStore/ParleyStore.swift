import Foundation
import ParleyCore

/// Where Parley keeps agents, instances, conversations and their items: `SQLiteStore` (one
/// file, the embedded default) or `PostgresStore` (a shared PostgreSQL, for cluster mode).
///
/// Both engines have the same schema, versioned the same way, and the same semantics: every
/// write is its own transaction, so a write that returned is never lost. Calls are `async`
/// and never block the caller's executor on the database: PostgreSQL runs them on
/// connections owned by the store; SQLite's are short enough to run in place.
///
/// ```swift
/// let store: any ParleyStore = try SQLiteStore(path: ".parley/parley.sqlite")
/// try await store.appendItem(ItemRecord(id: "item_1", conversationID: "conv_1", message: .user("Hi"), createdAt: Date()))
/// let items = try await store.items(conversationID: "conv_1")
/// ```
public protocol ParleyStore: AnyObject, Sendable {
    // MARK: Agents

    /// Inserts or replaces an agent (its creation time stays the first one).
    func saveAgent(_ agent: AgentRecord) async throws
    /// The agent with `id`, or `nil`.
    func agent(id: String) async throws -> AgentRecord?
    /// Every agent, oldest first.
    func agents() async throws -> [AgentRecord]
    /// Deletes an agent; returns whether it existed.
    @discardableResult
    func deleteAgent(id: String) async throws -> Bool

    // MARK: Instances

    /// Inserts an instance, or updates the status of the one with its id.
    func saveInstance(_ instance: InstanceRecord) async throws
    /// The instance with `id`, or `nil`.
    func instance(id: String) async throws -> InstanceRecord?
    /// Sets an instance's status.
    func setInstanceStatus(id: String, status: String) async throws
    /// Records which agent holds an instance now (after a handoff).
    func setInstanceAgent(id: String, agentID: String) async throws

    // MARK: Conversations and items

    /// Creates a conversation if it does not exist yet.
    func ensureConversation(id: String, agentID: String?) async throws
    /// Whether a conversation exists.
    func conversationExists(id: String) async throws -> Bool
    /// Appends a completed item to its conversation (creating the conversation if needed), in
    /// its own transaction. Writing an item id a second time in the same conversation replaces
    /// its content but keeps its position, so a write may be retried safely. Items are keyed by
    /// conversation and id: the same id in another conversation is another item.
    func appendItem(_ item: ItemRecord) async throws
    /// Removes an item of a conversation; returns whether it existed there.
    @discardableResult
    func deleteItem(conversationID: String, id: String) async throws -> Bool
    /// The items of a conversation in the order they were first written.
    func items(conversationID: String) async throws -> [ItemRecord]
    /// Deletes a conversation with its items, instances, calls and turn figures; returns whether it existed.
    @discardableResult
    func deleteConversation(id: String) async throws -> Bool

    // MARK: Calls and turn figures (the operator console)

    /// Inserts a call, or updates its end, error count and turn count.
    func saveCall(_ call: CallRecord) async throws
    /// A page of calls matching `query`, newest first.
    func calls(_ query: CallQuery) async throws -> CallPage
    /// The calls of a conversation, oldest first.
    func calls(conversationID: String) async throws -> [CallRecord]
    /// When each call that started in `from..<before` started, oldest first.
    func callStartTimes(from: Date, before: Date) async throws -> [Date]
    /// Inserts a turn's figures, or replaces those of the same response.
    func saveTurnFigures(_ figures: TurnFiguresRecord) async throws
    /// The figures of a conversation's turns, in the order the turns ended.
    func turnFigures(conversationID: String) async throws -> [TurnFiguresRecord]
    /// The figures of every turn that ended in `from..<before`, in the order the turns ended.
    func turnFigures(from: Date, before: Date) async throws -> [TurnFiguresRecord]

    /// Finishes the writes under way and closes the store; later calls throw.
    func close() async
}
