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
/// `@unchecked Sendable`: the `sqlite3` handle is only touched while holding `lock`.
public final class SQLiteDatabase: @unchecked Sendable {
    private var handle: OpaquePointer?
    private let lock = NSLock()

    /// Opens (creating if needed) the database at `path` in WAL mode.
    /// - Throws: `SQLiteError` when the file cannot be opened.
    public init(path: String) throws {
        var connection: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &connection, flags, nil)
        guard status == SQLITE_OK, let connection else {
            let message = connection.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open \(path)"
            sqlite3_close(connection)
            throw SQLiteError(code: status, message: message)
        }
        handle = connection
        sqlite3_busy_timeout(connection, 5_000)
        try execute("PRAGMA journal_mode=WAL")
        try execute("PRAGMA synchronous=NORMAL")
        try execute("PRAGMA foreign_keys=ON")
    }

    deinit { sqlite3_close_v2(handle) }

    /// Runs one or more statements that return no rows.
    public func execute(_ sql: String) throws {
        try withLock {
            var error: UnsafeMutablePointer<CChar>?
            let status = sqlite3_exec(handle, sql, nil, nil, &error)
            if status != SQLITE_OK {
                let message = error.map { String(cString: $0) } ?? "unknown"
                sqlite3_free(error)
                throw SQLiteError(code: status, message: message)
            }
        }
    }

    /// Runs one statement with `parameters` bound to `?` in order and returns its rows.
    @discardableResult
    public func query(_ sql: String, _ parameters: [SQLiteValue] = []) throws -> [[SQLiteValue]] {
        try withLock { try unlockedQuery(sql, parameters) }
    }

    /// Runs `body` in one transaction, rolled back if it throws.
    public func transaction<T>(_ body: (Transaction) throws -> T) throws -> T {
        try withLock {
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

    /// The number of rows changed by the last statement.
    public var changes: Int { withLock { Int(sqlite3_changes(handle)) } }

    private func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    private func unlockedQuery(_ sql: String, _ parameters: [SQLiteValue]) throws -> [[SQLiteValue]] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else { throw lastError() }
        defer { sqlite3_finalize(statement) }
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

    private func lastError() -> SQLiteError {
        SQLiteError(code: sqlite3_errcode(handle), message: String(cString: sqlite3_errmsg(handle)))
    }
}

/// SQLite's `SQLITE_TRANSIENT`: the library copies bound text before the call returns.
private let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
