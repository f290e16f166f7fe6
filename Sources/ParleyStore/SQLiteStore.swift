import Foundation
import ParleyCore

/// The embedded store: agents, instances, conversations and their items in one SQLite file
/// (WAL). Every write is its own transaction, so a crash never loses a completed item.
///
/// A write takes well under a millisecond, so calls run SQLite in place, on the caller's
/// thread, behind the `async` interface of `ParleyStore`.
public final class SQLiteStore: ParleyStore {
    /// The underlying connection.
    public let database: SQLiteDatabase

    /// Opens or creates the store at `path` and brings its schema up to date.
    /// - Throws: `SQLiteError` when the file cannot be opened or migrated.
    public init(path: String) throws {
        database = try SQLiteDatabase(path: path)
        try StoreMigrations.apply(to: database)
    }

    /// Checkpoints the WAL into the database file and closes it; later calls throw.
    /// Releasing the last reference to the store does the same.
    public func close() { database.close() }

    // MARK: Agents

    /// Inserts or replaces an agent.
    public func saveAgent(_ agent: AgentRecord) async throws {
        try database.query(
            "INSERT INTO agents(id, document, created_at, updated_at) VALUES(?, ?, ?, ?) "
                + "ON CONFLICT(id) DO UPDATE SET document = excluded.document, updated_at = excluded.updated_at",
            [.text(agent.id), .text(agent.document.jsonText), .real(agent.createdAt.timeIntervalSince1970),
             .real(agent.updatedAt.timeIntervalSince1970)]
        )
    }

    /// The agent with `id`, or `nil`.
    public func agent(id: String) async throws -> AgentRecord? {
        try database.query("SELECT id, document, created_at, updated_at FROM agents WHERE id = ?", [.text(id)])
            .first.map(Self.agentRecord)
    }

    /// Every agent, oldest first.
    public func agents() async throws -> [AgentRecord] {
        try database.query("SELECT id, document, created_at, updated_at FROM agents ORDER BY created_at, id")
            .map(Self.agentRecord)
    }

    /// Deletes an agent; returns whether it existed.
    @discardableResult
    public func deleteAgent(id: String) async throws -> Bool {
        try database.transaction { transaction in
            try transaction.query("DELETE FROM agents WHERE id = ?", [.text(id)])
            return try transaction.query("SELECT changes()").first?.first?.integer == 1
        }
    }

    // MARK: Instances

    /// Inserts or replaces an instance.
    public func saveInstance(_ instance: InstanceRecord) async throws {
        try database.query(
            "INSERT INTO instances(id, agent_id, user_id, conversation_id, status, created_at) VALUES(?, ?, ?, ?, ?, ?) "
                + "ON CONFLICT(id) DO UPDATE SET status = excluded.status",
            [.text(instance.id), .text(instance.agentID), .text(instance.userID), .text(instance.conversationID),
             .text(instance.status), .real(instance.createdAt.timeIntervalSince1970)]
        )
    }

    /// The instance with `id`, or `nil`.
    public func instance(id: String) async throws -> InstanceRecord? {
        try database.query(
            "SELECT id, agent_id, user_id, conversation_id, status, created_at, current_agent_id FROM instances WHERE id = ?", [.text(id)]
        ).first.map { row in
            InstanceRecord(
                id: row[0].text ?? "", agentID: row[1].text ?? "", userID: row[2].text ?? "",
                conversationID: row[3].text ?? "", status: row[4].text ?? "ended",
                createdAt: Date(timeIntervalSince1970: row[5].real ?? 0), currentAgentID: row[6].text
            )
        }
    }

    /// Sets an instance's status.
    public func setInstanceStatus(id: String, status: String) async throws {
        try database.query("UPDATE instances SET status = ? WHERE id = ?", [.text(status), .text(id)])
    }

    /// Records which agent holds an instance now.
    public func setInstanceAgent(id: String, agentID: String) async throws {
        try database.query("UPDATE instances SET current_agent_id = ? WHERE id = ?", [.text(agentID), .text(id)])
    }

    // MARK: Conversations and items

    /// Creates a conversation if it does not exist yet.
    public func ensureConversation(id: String, agentID: String?) async throws {
        try database.query(
            "INSERT OR IGNORE INTO conversations(id, agent_id, created_at) VALUES(?, ?, ?)",
            [.text(id), agentID.map(SQLiteValue.text) ?? .null, .real(Date().timeIntervalSince1970)]
        )
    }

    /// Whether a conversation exists.
    public func conversationExists(id: String) async throws -> Bool {
        try !database.query("SELECT 1 FROM conversations WHERE id = ?", [.text(id)]).isEmpty
    }

    /// Appends a completed item to its conversation (creating the conversation if needed).
    /// Writing an item id a second time replaces its content but keeps its position.
    public func appendItem(_ item: ItemRecord) async throws {
        let payload = try String(decoding: JSONEncoder().encode(item.message), as: UTF8.self)
        try database.transaction { transaction in
            try transaction.query(
                "INSERT OR IGNORE INTO conversations(id, agent_id, created_at) VALUES(?, NULL, ?)",
                [.text(item.conversationID), .real(item.createdAt.timeIntervalSince1970)]
            )
            try transaction.query(
                "INSERT INTO items(id, conversation_id, message, created_at, agent_id, words) VALUES(?, ?, ?, ?, ?, ?) "
                    + "ON CONFLICT(conversation_id, id) DO UPDATE SET message = excluded.message, words = excluded.words",
                [.text(item.id), .text(item.conversationID), .text(payload), .real(item.createdAt.timeIntervalSince1970),
                 item.agentID.map(SQLiteValue.text) ?? .null, .text(item.searchableWords)]
            )
        }
    }

    /// Removes an item of a conversation; returns whether it existed there.
    @discardableResult
    public func deleteItem(conversationID: String, id: String) async throws -> Bool {
        try database.transaction { transaction in
            try transaction.query("DELETE FROM items WHERE conversation_id = ? AND id = ?", [.text(conversationID), .text(id)])
            return try transaction.query("SELECT changes()").first?.first?.integer == 1
        }
    }

    /// Deletes a conversation with its items, instances, calls and turn figures; returns whether it existed.
    @discardableResult
    public func deleteConversation(id: String) async throws -> Bool {
        try database.transaction { transaction in
            try transaction.query("DELETE FROM items WHERE conversation_id = ?", [.text(id)])
            try transaction.query("DELETE FROM instances WHERE conversation_id = ?", [.text(id)])
            try transaction.query("DELETE FROM calls WHERE conversation_id = ?", [.text(id)])
            try transaction.query("DELETE FROM turn_figures WHERE conversation_id = ?", [.text(id)])
            try transaction.query("DELETE FROM conversations WHERE id = ?", [.text(id)])
            return try transaction.query("SELECT changes()").first?.first?.integer == 1
        }
    }

    /// The items of a conversation in the order they completed.
    public func items(conversationID: String) async throws -> [ItemRecord] {
        let decoder = JSONDecoder()
        return try database.query(
            "SELECT id, conversation_id, message, created_at, agent_id FROM items WHERE conversation_id = ? ORDER BY position",
            [.text(conversationID)]
        ).map { row in
            ItemRecord(
                id: row[0].text ?? "", conversationID: row[1].text ?? "",
                message: try decoder.decode(ChatMessage.self, from: Data((row[2].text ?? "").utf8)),
                createdAt: Date(timeIntervalSince1970: row[3].real ?? 0), agentID: row[4].text
            )
        }
    }

    /// Runs SQLite's integrity check; returns `true` when it reports `ok`.
    public func integrityCheck() throws -> Bool {
        try database.query("PRAGMA integrity_check").first?.first?.text == "ok"
    }

    private static func agentRecord(_ row: [SQLiteValue]) throws -> AgentRecord {
        AgentRecord(
            id: row[0].text ?? "",
            document: try JSONValue(parsing: row[1].text ?? "null"),
            createdAt: Date(timeIntervalSince1970: row[2].real ?? 0),
            updatedAt: Date(timeIntervalSince1970: row[3].real ?? 0)
        )
    }
}
