import Foundation

/// The store's schema, as an ordered list of migrations tracked in `PRAGMA user_version`.
enum StoreMigrations {
    /// Migration `n` brings the schema from version `n` to `n + 1`.
    static let steps: [String] = [
        """
        CREATE TABLE agents(
            id TEXT PRIMARY KEY,
            document TEXT NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE TABLE conversations(
            id TEXT PRIMARY KEY,
            agent_id TEXT,
            created_at REAL NOT NULL
        );
        CREATE TABLE instances(
            id TEXT PRIMARY KEY,
            agent_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            conversation_id TEXT NOT NULL REFERENCES conversations(id),
            status TEXT NOT NULL,
            created_at REAL NOT NULL
        );
        CREATE TABLE items(
            position INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            message TEXT NOT NULL,
            created_at REAL NOT NULL
        );
        CREATE INDEX items_by_conversation ON items(conversation_id, position);
        """,
    ]

    /// Applies every migration the database has not seen yet, each in its own transaction.
    static func apply(to database: SQLiteDatabase) throws {
        let current = Int(try database.query("PRAGMA user_version").first?.first?.integer ?? 0)
        guard current <= steps.count else {
            throw SQLiteError(code: 0, message: "database schema \(current) is newer than this Parley (\(steps.count))")
        }
        for version in current..<steps.count {
            try database.execute("BEGIN IMMEDIATE; \(steps[version]) PRAGMA user_version = \(version + 1); COMMIT;")
        }
    }
}
