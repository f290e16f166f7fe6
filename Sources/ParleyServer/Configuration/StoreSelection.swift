import Foundation
import ParleyStore

/// The store a server runs on, and whether other nodes share it.
public enum ServerStore: Sendable {
    /// A store this node alone uses (SQLite by default).
    case local(any ParleyStore)
    /// PostgreSQL, shared with the other nodes of a cluster (cluster mode).
    case shared(PostgresStore)

    /// The store itself.
    public var store: any ParleyStore {
        switch self {
        case .local(let store): store
        case .shared(let store): store
        }
    }
}

extension ServerSettings {
    /// Opens the store these settings name: PostgreSQL at `databaseURL` (cluster mode), else
    /// the SQLite file `parley.sqlite` in the data directory.
    /// - Throws: `PostgresError` when the database cannot be reached or migrated,
    ///   `SQLiteError` when the file cannot be opened.
    public func openStore() throws -> ServerStore {
        if let databaseURL { return .shared(try PostgresStore(url: databaseURL)) }
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        return .local(try SQLiteStore(path: dataDirectory.appendingPathComponent("parley.sqlite").path))
    }
}
