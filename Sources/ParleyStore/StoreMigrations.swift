import Foundation
import ParleyCore

/// The store's schema as an ordered list of migrations, each written for both engines.
/// Migration `n` brings the schema from version `n` to `n + 1`; SQLite keeps the version in
/// `PRAGMA user_version`, PostgreSQL in the one-row table `parley_schema`.
enum StoreMigrations {
    /// One schema change, in each engine's dialect. Timestamps are seconds since 1970 in both
    /// (`REAL`, `double precision`); documents and messages are JSON text.
    struct Step {
        var sqlite: String
        var postgres: String
        /// Whether the step adds `items.words`, which the migration then fills in for every
        /// item already stored (in the same transaction). Its `sqlite` is one statement.
        var fillsItemWords = false
    }

    static let steps: [Step] = [
        Step(
            sqlite: """
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
            postgres: """
                CREATE TABLE agents(
                    id text PRIMARY KEY,
                    document text NOT NULL,
                    created_at double precision NOT NULL,
                    updated_at double precision NOT NULL
                );
                CREATE TABLE conversations(
                    id text PRIMARY KEY,
                    agent_id text,
                    created_at double precision NOT NULL
                );
                CREATE TABLE instances(
                    id text PRIMARY KEY,
                    agent_id text NOT NULL,
                    user_id text NOT NULL,
                    conversation_id text NOT NULL REFERENCES conversations(id),
                    status text NOT NULL,
                    created_at double precision NOT NULL
                );
                CREATE TABLE items(
                    position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    id text NOT NULL UNIQUE,
                    conversation_id text NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
                    message text NOT NULL,
                    created_at double precision NOT NULL
                );
                CREATE INDEX items_by_conversation ON items(conversation_id, position);
                """
        ),
        // Cluster mode: nodes, instance ownership (owner node, epoch), the command outbox,
        // the cluster-wide session registry and token buckets. SQLite has one node and no
        // cluster, so its step only moves the version on.
        Step(
            sqlite: "",
            postgres: """
                ALTER TABLE instances ADD COLUMN owner_node text, ADD COLUMN epoch bigint NOT NULL DEFAULT 0;
                CREATE TABLE nodes(
                    id text PRIMARY KEY,
                    url text NOT NULL,
                    started_at double precision NOT NULL,
                    heartbeat_at double precision NOT NULL,
                    draining boolean NOT NULL DEFAULT false,
                    dead boolean NOT NULL DEFAULT false
                );
                CREATE TABLE commands(
                    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    id text NOT NULL UNIQUE,
                    node_id text NOT NULL,
                    sender_node text NOT NULL,
                    instance_id text NOT NULL,
                    kind text NOT NULL,
                    epoch bigint NOT NULL,
                    created_at double precision NOT NULL,
                    acknowledged_at double precision,
                    result text
                );
                CREATE INDEX commands_unacknowledged ON commands(node_id, seq) WHERE acknowledged_at IS NULL;
                CREATE TABLE live_sessions(
                    id text PRIMARY KEY,
                    node_id text NOT NULL,
                    instance_id text,
                    started_at double precision NOT NULL
                );
                CREATE TABLE token_buckets(
                    key text PRIMARY KEY,
                    tokens double precision NOT NULL,
                    updated_at double precision NOT NULL
                );
                """
        ),
        // Items belong to their conversation: an id is unique within one conversation only,
        // so one conversation's client can neither overwrite nor delete another's items.
        // Every row is kept, with its position.
        Step(
            sqlite: """
                CREATE TABLE items_keyed_by_conversation(
                    position INTEGER PRIMARY KEY AUTOINCREMENT,
                    id TEXT NOT NULL,
                    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
                    message TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    UNIQUE(conversation_id, id)
                );
                INSERT INTO items_keyed_by_conversation(position, id, conversation_id, message, created_at)
                    SELECT position, id, conversation_id, message, created_at FROM items;
                DROP TABLE items;
                ALTER TABLE items_keyed_by_conversation RENAME TO items;
                CREATE INDEX items_by_conversation ON items(conversation_id, position);
                """,
            postgres: """
                ALTER TABLE items DROP CONSTRAINT items_id_key;
                ALTER TABLE items ADD CONSTRAINT items_conversation_id_id_key UNIQUE (conversation_id, id);
                """
        ),
        // Per-user and per-token session limits that hold across the cluster: each live
        // session names whom it counts against (both NULL for the backend's own sessions).
        Step(
            sqlite: "",
            postgres: """
                ALTER TABLE live_sessions ADD COLUMN user_id text, ADD COLUMN token_id text;
                CREATE INDEX live_sessions_by_user ON live_sessions(user_id);
                """
        ),
        // The operator console: each session of a conversation as a call (door, user, node,
        // start, end, errors, turns), and each answered turn's latency figures.
        Step(
            sqlite: """
                CREATE TABLE calls(
                    id TEXT PRIMARY KEY,
                    conversation_id TEXT NOT NULL,
                    user_id TEXT,
                    door TEXT NOT NULL,
                    node_id TEXT NOT NULL,
                    started_at REAL NOT NULL,
                    ended_at REAL,
                    error_count INTEGER NOT NULL DEFAULT 0,
                    turn_count INTEGER NOT NULL DEFAULT 0
                );
                CREATE INDEX calls_by_start ON calls(started_at, id);
                CREATE INDEX calls_by_conversation ON calls(conversation_id);
                CREATE TABLE turn_figures(
                    response_id TEXT NOT NULL,
                    conversation_id TEXT NOT NULL,
                    session_id TEXT NOT NULL,
                    user_item_id TEXT,
                    turn_ended_at REAL NOT NULL,
                    speech_end_audio_ms INTEGER,
                    silence_window_ms REAL,
                    detector_wait_ms REAL,
                    transcription_ms REAL,
                    first_token_ms REAL,
                    first_audio_ms REAL,
                    status TEXT NOT NULL,
                    unheard_text TEXT,
                    verdicts TEXT,
                    PRIMARY KEY(conversation_id, response_id)
                );
                CREATE INDEX turn_figures_by_time ON turn_figures(turn_ended_at);
                """,
            postgres: """
                CREATE TABLE calls(
                    id text PRIMARY KEY,
                    conversation_id text NOT NULL,
                    user_id text,
                    door text NOT NULL,
                    node_id text NOT NULL,
                    started_at double precision NOT NULL,
                    ended_at double precision,
                    error_count integer NOT NULL DEFAULT 0,
                    turn_count integer NOT NULL DEFAULT 0
                );
                CREATE INDEX calls_by_start ON calls(started_at, id);
                CREATE INDEX calls_by_conversation ON calls(conversation_id);
                CREATE TABLE turn_figures(
                    response_id text NOT NULL,
                    conversation_id text NOT NULL,
                    session_id text NOT NULL,
                    user_item_id text,
                    turn_ended_at double precision NOT NULL,
                    speech_end_audio_ms bigint,
                    silence_window_ms double precision,
                    detector_wait_ms double precision,
                    transcription_ms double precision,
                    first_token_ms double precision,
                    first_audio_ms double precision,
                    status text NOT NULL,
                    unheard_text text,
                    verdicts text,
                    PRIMARY KEY(conversation_id, response_id)
                );
                CREATE INDEX turn_figures_by_time ON turn_figures(turn_ended_at);
                """
        ),
        // Handoffs: which agent spoke each item, and which agent holds an instance now.
        Step(
            sqlite: """
                ALTER TABLE items ADD COLUMN agent_id TEXT;
                ALTER TABLE instances ADD COLUMN current_agent_id TEXT;
                """,
            postgres: """
                ALTER TABLE items ADD COLUMN agent_id text;
                ALTER TABLE instances ADD COLUMN current_agent_id text;
                """
        ),
        // The operator console through any node: each node publishes its live sessions'
        // states (a JSON object, session id → state) in its row. SQLite has one node.
        Step(
            sqlite: "",
            postgres: "ALTER TABLE nodes ADD COLUMN session_states text NOT NULL DEFAULT '{}';"
        ),
        // Search by what was said: each item's words, lowercased, letters and digits only
        // (`ItemRecord.searchableWords`), filled in for the items already stored.
        Step(
            sqlite: "ALTER TABLE items ADD COLUMN words TEXT",
            postgres: "ALTER TABLE items ADD COLUMN words text;",
            fillsItemWords: true
        ),
    ]

    /// Applies every migration the SQLite database has not seen yet, each in its own transaction.
    static func apply(to database: SQLiteDatabase) throws {
        let current = Int(try database.query("PRAGMA user_version").first?.first?.integer ?? 0)
        guard current <= steps.count else {
            throw SQLiteError(code: 0, message: "database schema \(current) is newer than this Parley (\(steps.count))")
        }
        for version in current..<steps.count {
            guard steps[version].fillsItemWords else {
                try database.execute("BEGIN IMMEDIATE; \(steps[version].sqlite) PRAGMA user_version = \(version + 1); COMMIT;")
                continue
            }
            try database.transaction { transaction in
                try transaction.query(steps[version].sqlite)
                for row in try transaction.query("SELECT position, message FROM items") {
                    guard let position = row[0].integer, let message = row[1].text else { continue }
                    try transaction.query("UPDATE items SET words = ? WHERE position = ?", [.text(words(ofStored: message)), .integer(position)])
                }
                try transaction.query("PRAGMA user_version = \(version + 1)")
            }
        }
    }

    /// The searchable words of an item's stored message; an item that no longer decodes has none.
    private static func words(ofStored message: String) -> String {
        guard let decoded = try? JSONDecoder().decode(ChatMessage.self, from: Data(message.utf8)) else { return " " }
        return ItemRecord.searchableWords(of: decoded)
    }

    /// Applies every migration the PostgreSQL database has not seen yet, in one transaction
    /// that holds an advisory lock, so nodes starting together migrate once.
    static func apply(to connection: PostgresConnection) throws {
        try connection.transaction {
            try connection.execute("SELECT pg_advisory_xact_lock(\(migrationLock))")
            try connection.execute("CREATE TABLE IF NOT EXISTS parley_schema(version integer NOT NULL)")
            let current = try connection.query("SELECT version FROM parley_schema").rows.first?.first?.flatMap { Int($0) }
            let version = current ?? 0
            guard version <= steps.count else {
                throw PostgresError(message: "database schema \(version) is newer than this Parley (\(steps.count))")
            }
            for step in steps[version...] {
                try connection.execute(step.postgres)
                guard step.fillsItemWords else { continue }
                for row in try connection.query("SELECT position, message FROM items").rows {
                    guard let position = row[0], let message = row[1] else { continue }
                    try connection.query("UPDATE items SET words = $1 WHERE position = $2", [words(ofStored: message), position])
                }
            }
            if current == nil {
                try connection.query("INSERT INTO parley_schema(version) VALUES($1)", [String(steps.count)])
            } else {
                try connection.query("UPDATE parley_schema SET version = $1", [String(steps.count)])
            }
        }
    }

    /// The advisory lock key migrations hold (any fixed number; "parley" in ASCII).
    static let migrationLock: Int64 = 0x70_61_72_6C_65_79
}
