import CSQLite
import Foundation

/// Opens the raw `sqlite3` connections Parley uses, all with the same settings: WAL journal,
/// `synchronous=NORMAL` (a commit does not fsync; a crash loses nothing committed, a power
/// loss at most the last commits) and `retryWhileBusy` as busy handler.
enum SQLiteConnection {

    /// Opens (creating if needed) the database at `path` and applies Parley's settings.
    /// - Throws: `SQLiteError` when the file cannot be opened or is not a database.
    static func open(path: String) throws -> OpaquePointer {
        var connection: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &connection, flags, nil)
        guard status == SQLITE_OK, let connection else {
            let message = connection.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open \(path)"
            sqlite3_close(connection)
            throw SQLiteError(code: status, message: message)
        }
        do {
            waitWhileBusy(connection)
            try execute("PRAGMA journal_mode=WAL", on: connection)
            try execute("PRAGMA synchronous=NORMAL", on: connection)
            return connection
        } catch {
            sqlite3_close(connection)
            throw error
        }
    }

    /// Makes `connection` retry a locked database for about 5 s before failing with `SQLITE_BUSY`.
    static func waitWhileBusy(_ connection: OpaquePointer) {
        sqlite3_busy_handler(connection, retryWhileBusy, nil)
    }

    /// Makes `connection` fail with `SQLITE_BUSY` at once when the database is locked.
    static func failWhenBusy(_ connection: OpaquePointer) {
        sqlite3_busy_handler(connection, nil, nil)
    }

    /// Runs statements that return no rows on `connection`.
    /// - Throws: `SQLiteError` with SQLite's message.
    static func execute(_ sql: String, on connection: OpaquePointer) throws {
        var error: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(connection, sql, nil, nil, &error)
        if status != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(connection))
            sqlite3_free(error)
            throw SQLiteError(code: status, message: message)
        }
    }
}

/// Retries in 100 µs steps for the first 5 ms, then in 1 ms steps, and gives up after about 5 s.
/// (SQLite's `sqlite3_busy_timeout` sleeps 1, 2, 5, 10… ms, so a writer waiting out a 3 ms
/// checkpoint came back after 8 ms.)
private func retryWhileBusy(context: UnsafeMutableRawPointer?, attempts: Int32) -> Int32 {
    let shortRetries: Int32 = 50
    let longRetries: Int32 = 4_995
    guard attempts < shortRetries + longRetries else { return 0 }
    usleep(attempts < shortRetries ? 100 : 1_000)
    return 1
}
