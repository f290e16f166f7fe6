import CSQLite
import Foundation

/// An error from SQLite, with the message SQLite gave.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// SQLite's result code.
    public var code: Int32
    /// SQLite's message.
    public var message: String
    public var description: String { "SQLite error \(code): \(message)" }
}

/// A value bound to or read from a SQL statement.
public enum SQLiteValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)

    /// The text, if this is text.
    public var text: String? { if case .text(let value) = self { value } else { nil } }
    /// The integer, if this is an integer.
    public var integer: Int64? { if case .integer(let value) = self { value } else { nil } }
    /// The real, if this is a real or an integer.
    public var real: Double? {
        switch self {
        case .real(let value): value
        case .integer(let value): Double(value)
        default: nil
        }
    }
}

/// One SQLite connection, used from any thread: every call takes `lock`.
///
/// Its WAL is checkpointed by a `WALCheckpointer` on a background thread with its own
/// connection, never inside a commit, so a write never waits for a checkpoint's fsyncs.
///
/// `@unchecked Sendable`: `handle` and `checkpointer` are only touched while holding `lock`
/// (or in `init`/`deinit`, where no other reference exists).
public final class SQLiteDatabase: @unchecked Sendable {
    private var handle: OpaquePointer?
    private var checkpointer: WALCheckpointer?
    private let lock = NSLock()
    /// Prepared statements by their SQL, reused (reset after each run) until the connection
    /// closes: SQLite then parses and plans each of the store's statements once.
    private var statements: [String: OpaquePointer] = [:]
    /// Beyond this many, statements are prepared for one run only (the store has about 30).
    private static let maximumCachedStatements = 128

    /// Opens (creating if needed) the database at `path` in WAL mode.
    /// - Throws: `SQLiteError` when the file cannot be opened.
    public init(path: String) throws {
        handle = try SQLiteConnection.open(path: path)
        try execute("PRAGMA foreign_keys=ON")
        // An in-memory or temporary database has no WAL, and nothing to checkpoint.
        if try query("PRAGMA journal_mode").first?.first?.text == "wal" {
            let checkpointer = try WALCheckpointer(path: path)
            self.checkpointer = checkpointer
            // SQLite's automatic checkpoint is itself a WAL hook, which installing ours
            // replaces; turning it off first says so.
            sqlite3_wal_autocheckpoint(handle, 0)
            sqlite3_wal_hook(handle, walCommitHook, Unmanaged.passUnretained(checkpointer).toOpaque())
        }
    }

    deinit { unlockedClose() }

    /// Stops the background checkpointer, copies the whole WAL into the database file and
    /// closes the connection. Later calls throw `SQLiteError` (`SQLITE_MISUSE`); closing
    /// twice is harmless. Releasing the last reference does the same.
    public func close() {
        withLock { unlockedClose() }
    }

    /// Runs one or more statements that return no rows.
    public func execute(_ sql: String) throws {
        try withOpenConnection { connection in try SQLiteConnection.execute(sql, on: connection) }
    }

    /// Runs one statement with `parameters` bound to `?` in order and returns its rows.
    @discardableResult
    public func query(_ sql: String, _ parameters: [SQLiteValue] = []) throws -> [[SQLiteValue]] {
        try withOpenConnection { _ in try unlockedQuery(sql, parameters) }
    }

    /// Runs `body` in one transaction, rolled back if it throws.
    public func transaction<T>(_ body: (Transaction) throws -> T) throws -> T {
        try withOpenConnection { _ in
            _ = try unlockedQuery("BEGIN IMMEDIATE", [])
            do {
                let result = try body(Transaction(database: self))
                _ = try unlockedQuery("COMMIT", [])
                return result
            } catch {
                _ = try? unlockedQuery("ROLLBACK", [])
                throw error
            }
        }
    }

    /// Statements run inside `transaction`, while the connection lock is held.
    public struct Transaction {
        fileprivate let database: SQLiteDatabase

        /// Runs one statement inside the transaction and returns its rows.
        @discardableResult
        public func query(_ sql: String, _ parameters: [SQLiteValue] = []) throws -> [[SQLiteValue]] {
            try database.unlockedQuery(sql, parameters)
        }
    }

    /// The number of rows changed by the last statement (0 once closed).
    public var changes: Int { withLock { handle.map { Int(sqlite3_changes($0)) } ?? 0 } }

    /// The background checkpointer; `nil` without a WAL or once closed.
    var currentCheckpointer: WALCheckpointer? { withLock { checkpointer } }

    /// What the background checkpointer has done; `nil` without a WAL or once closed.
    var checkpointActivity: WALCheckpointer.Activity? { withLock { checkpointer?.currentActivity } }

    private func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    private func withOpenConnection<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        try withLock {
            guard let handle else { throw SQLiteError(code: SQLITE_MISUSE, message: "the database is closed") }
            return try body(handle)
        }
    }

    /// Stops the checkpointer, then checkpoints and truncates the WAL on this connection, so a
    /// clean shutdown leaves no WAL behind. A failed final checkpoint loses nothing: the
    /// frames stay in the WAL and the next open reads them.
    private func unlockedClose() {
        guard let connection = handle else { return }
        handle = nil
        statements.values.forEach { sqlite3_finalize($0) }
        statements = [:]
        if let checkpointer {
            sqlite3_wal_hook(connection, nil, nil)
            checkpointer.stop()
            self.checkpointer = nil
            sqlite3_wal_checkpoint_v2(connection, "main", SQLITE_CHECKPOINT_TRUNCATE, nil, nil)
        }
        sqlite3_close_v2(connection)
    }

    private func unlockedQuery(_ sql: String, _ parameters: [SQLiteValue]) throws -> [[SQLiteValue]] {
        let (statement, isCached) = try preparedStatement(sql)
        defer {
            if isCached {
                sqlite3_reset(statement)
                sqlite3_clear_bindings(statement)
            } else {
                sqlite3_finalize(statement)
            }
        }
        for (offset, parameter) in parameters.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch parameter {
            case .null: status = sqlite3_bind_null(statement, index)
            case .integer(let value): status = sqlite3_bind_int64(statement, index, value)
            case .real(let value): status = sqlite3_bind_double(statement, index, value)
            case .text(let value): status = sqlite3_bind_text(statement, index, value, -1, sqliteTransient)
            }
            guard status == SQLITE_OK else { throw lastError() }
        }
        var rows: [[SQLiteValue]] = []
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { break }
            guard status == SQLITE_ROW else { throw lastError() }
            rows.append((0..<sqlite3_column_count(statement)).map { column in
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: .integer(sqlite3_column_int64(statement, column))
                case SQLITE_FLOAT: .real(sqlite3_column_double(statement, column))
                case SQLITE_NULL: .null
                default: .text(String(cString: sqlite3_column_text(statement, column)))
                }
            })
        }
        return rows
    }

    /// The prepared statement for `sql`, from the cache when it was prepared before; `isCached`
    /// tells whether it stays in the cache (reset it) or is the caller's (finalize it).
    private func preparedStatement(_ sql: String) throws -> (statement: OpaquePointer, isCached: Bool) {
        if let statement = statements[sql] { return (statement, true) }
        var prepared: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &prepared, nil) == SQLITE_OK, let statement = prepared else {
            sqlite3_finalize(prepared)
            throw lastError()
        }
        guard statements.count < Self.maximumCachedStatements else { return (statement, false) }
        statements[sql] = statement
        return (statement, true)
    }

    private func lastError() -> SQLiteError {
        SQLiteError(code: sqlite3_errcode(handle), message: String(cString: sqlite3_errmsg(handle)))
    }
}

/// SQLite's `SQLITE_TRANSIENT`: the library copies bound text before the call returns.
private let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
