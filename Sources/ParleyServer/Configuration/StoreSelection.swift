import Foundation
import ParleyStore

extension ServerSettings {
    /// Opens the store these settings name: PostgreSQL at `databaseURL` (cluster mode), else
    /// the SQLite file `parley.sqlite` in the data directory.
    /// - Throws: `PostgresError` when the database cannot be reached or migrated,
    ///   `SQLiteError` when the file cannot be opened.
    public func openStore() throws -> any ParleyStore {
        if let databaseURL { return try PostgresStore(url: databaseURL) }
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        return try SQLiteStore(path: dataDirectory.appendingPathComponent("parley.sqlite").path)
    }
}
