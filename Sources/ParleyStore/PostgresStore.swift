import Foundation
import ParleyCore

/// The store on a PostgreSQL server, for cluster mode: several Parley nodes share one
/// database. Same schema and semantics as `SQLiteStore`; every call runs on a small pool of
/// connections owned by the store (`PostgresConnectionPool`), and a call that meets a lost
/// connection (the server restarting) reconnects and runs again. Each call is documented
/// on `ParleyStore`.
///
/// ```swift
/// let store = try PostgresStore(url: "postgresql://parley@db.internal/parley")
/// try await store.saveAgent(agent)
/// ```
public final class PostgresStore: ParleyStore {
    /// The connections the store's calls run on, shared with `PostgresCluster`.
    let pool: PostgresConnectionPool
    /// The database's URL, for the cluster's own LISTEN connection.
    let url: String

    /// Connects to `url`, brings the schema up to date and opens the pool.
    /// - Parameters:
    ///   - url: a `postgresql://` URL (libpq's syntax, e.g. `postgresql://user:password@host:5432/db?sslmode=require`).
    ///   - connections: how many calls run at once.
    ///   - reconnectTimeout: how long a call waits for a lost server to come back before it fails.
    /// - Throws: `PostgresError` when the server cannot be reached or the schema is newer than this Parley.
    public init(url: String, connections: Int = 4, reconnectTimeout: Duration = .seconds(30)) throws {
        self.url = url
        try StoreMigrations.apply(to: PostgresConnection(url: url))
        pool = try PostgresConnectionPool(url: url, size: connections, reconnectTimeout: reconnectTimeout)
    }

    deinit { pool.stop() }

    /// What is wrong with `url` as a PostgreSQL URL (one line, without its password), or
    /// `nil` when it is one. Nothing is contacted.
    public static func problem(inURL url: String) -> String? { PostgresConnection.problem(inURL: url) }

    public func close() async { await pool.close() }

    // MARK: Agents

    public func saveAgent(_ agent: AgentRecord) async throws {
        let parameters = [agent.id, agent.document.jsonText, Self.text(agent.createdAt), Self.text(agent.updatedAt)]
        try await pool.run { connection in
            try connection.query(
                "INSERT INTO agents(id, document, created_at, updated_at) VALUES($1, $2, $3, $4) "
                    + "ON CONFLICT(id) DO UPDATE SET document = excluded.document, updated_at = excluded.updated_at",
                parameters
            )
        }
    }

    public func agent(id: String) async throws -> AgentRecord? {
        try await pool.run { connection in
            try connection.query("SELECT id, document, created_at, updated_at FROM agents WHERE id = $1", [id])
                .rows.first.map(Self.agentRecord)
        }
    }

    public func agents() async throws -> [AgentRecord] {
        try await pool.run { connection in
            try connection.query("SELECT id, document, created_at, updated_at FROM agents ORDER BY created_at, id")
                .rows.map(Self.agentRecord)
        }
    }

    @discardableResult
    public func deleteAgent(id: String) async throws -> Bool {
        try await pool.run { connection in
            try connection.query("DELETE FROM agents WHERE id = $1", [id]).affectedRows == 1
        }
    }

    // MARK: Instances

    public func saveInstance(_ instance: InstanceRecord) async throws {
        let parameters = [instance.id, instance.agentID, instance.userID, instance.conversationID, instance.status, Self.text(instance.createdAt)]
        try await pool.run { connection in
            try connection.query(
                "INSERT INTO instances(id, agent_id, user_id, conversation_id, status, created_at) VALUES($1, $2, $3, $4, $5, $6) "
                    + "ON CONFLICT(id) DO UPDATE SET status = excluded.status",
                parameters
            )
        }
    }

    public func instance(id: String) async throws -> InstanceRecord? {
        try await pool.run { connection in
            try connection.query(
                "SELECT id, agent_id, user_id, conversation_id, status, created_at, current_agent_id FROM instances WHERE id = $1", [id]
            ).rows.first.map { row in
                InstanceRecord(
                    id: row[0] ?? "", agentID: row[1] ?? "", userID: row[2] ?? "", conversationID: row[3] ?? "",
                    status: row[4] ?? "ended", createdAt: Self.date(row[5]), currentAgentID: row[6]
                )
            }
        }
    }

    public func setInstanceStatus(id: String, status: String) async throws {
        try await pool.run { connection in
            try connection.query("UPDATE instances SET status = $1 WHERE id = $2", [status, id])
        }
    }

    public func setInstanceAgent(id: String, agentID: String) async throws {
        try await pool.run { connection in
            try connection.query("UPDATE instances SET current_agent_id = $1 WHERE id = $2", [agentID, id])
        }
    }

    // MARK: Conversations and items

    public func ensureConversation(id: String, agentID: String?) async throws {
        let parameters = [id, agentID, Self.text(Date())]
        try await pool.run { connection in
            try connection.query(
                "INSERT INTO conversations(id, agent_id, created_at) VALUES($1, $2, $3) ON CONFLICT(id) DO NOTHING", parameters
            )
        }
    }

    public func conversationExists(id: String) async throws -> Bool {
        try await pool.run { connection in
            try !connection.query("SELECT 1 FROM conversations WHERE id = $1", [id]).rows.isEmpty
        }
    }

    /// One statement, so one round trip and its own transaction: the conversation is created
    /// by the statement's first part when it is missing.
    public func appendItem(_ item: ItemRecord) async throws {
        let payload = try String(decoding: JSONEncoder().encode(item.message), as: UTF8.self)
        let parameters = [item.id, item.conversationID, payload, Self.text(item.createdAt), item.agentID, item.searchableWords]
        try await pool.run { connection in
            try connection.query(
                "WITH conversation AS (INSERT INTO conversations(id, agent_id, created_at) VALUES($2, NULL, $4) "
                    + "ON CONFLICT(id) DO NOTHING) "
                    + "INSERT INTO items(id, conversation_id, message, created_at, agent_id, words) VALUES($1, $2, $3, $4, $5, $6) "
                    + "ON CONFLICT(conversation_id, id) DO UPDATE SET message = excluded.message, words = excluded.words",
                parameters
            )
        }
    }

    @discardableResult
    public func deleteItem(conversationID: String, id: String) async throws -> Bool {
        try await pool.run { connection in
            try connection.query("DELETE FROM items WHERE conversation_id = $1 AND id = $2", [conversationID, id]).affectedRows == 1
        }
    }

    @discardableResult
    public func deleteConversation(id: String) async throws -> Bool {
        try await pool.run { connection in
            try connection.transaction {
                _ = try connection.query("DELETE FROM items WHERE conversation_id = $1", [id])
                _ = try connection.query("DELETE FROM instances WHERE conversation_id = $1", [id])
                _ = try connection.query("DELETE FROM calls WHERE conversation_id = $1", [id])
                _ = try connection.query("DELETE FROM turn_figures WHERE conversation_id = $1", [id])
                return try connection.query("DELETE FROM conversations WHERE id = $1", [id]).affectedRows == 1
            }
        }
    }

    public func items(conversationID: String) async throws -> [ItemRecord] {
        try await pool.run { connection in
            let decoder = JSONDecoder()
            return try connection.query(
                "SELECT id, conversation_id, message, created_at, agent_id FROM items WHERE conversation_id = $1 ORDER BY position",
                [conversationID]
            ).rows.map { row in
                ItemRecord(
                    id: row[0] ?? "", conversationID: row[1] ?? "",
                    message: try decoder.decode(ChatMessage.self, from: Data((row[2] ?? "").utf8)),
                    createdAt: Self.date(row[3]), agentID: row[4]
                )
            }
        }
    }

    // MARK: Values

    /// A time as the text of seconds since 1970 (Swift prints the shortest exact decimal).
    private static func text(_ date: Date) -> String { String(date.timeIntervalSince1970) }

    private static func date(_ text: String?) -> Date {
        Date(timeIntervalSince1970: text.flatMap(Double.init) ?? 0)
    }

    private static func agentRecord(_ row: [String?]) throws -> AgentRecord {
        AgentRecord(
            id: row[0] ?? "", document: try JSONValue(parsing: row[1] ?? "null"),
            createdAt: date(row[2]), updatedAt: date(row[3])
        )
    }
}
