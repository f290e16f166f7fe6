import Foundation
import ParleyCore
import Testing
@testable import ParleyStore

/// What only the SQLite engine has: its WAL, its statement cache, its file.
@Suite struct SQLiteStoreTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    var path: String { directory.appendingPathComponent("parley.sqlite").path }

    @Test func usesWriteAheadLogAndPassesTheIntegrityCheck() async throws {
        let store = try SQLiteStore(path: path)
        try await store.appendItem(ItemRecord(id: "item_1", conversationID: "conv_1", message: .user("hi"), createdAt: Date()))
        #expect(try store.database.query("PRAGMA journal_mode").first?.first?.text == "wal")
        #expect(try store.integrityCheck())
    }

    @Test func preparedStatementsAreReusedWithFreshBindingsAndSurviveErrors() throws {
        let database = try SQLiteDatabase(path: path)
        try database.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
        let insert = "INSERT INTO notes(id, text) VALUES(?, ?)"
        try database.query(insert, [.integer(1), .text("one")])
        // The same statement failing (a duplicate key) leaves it ready for the next run.
        #expect(throws: SQLiteError.self) { try database.query(insert, [.integer(1), .text("again")]) }
        try database.query(insert, [.integer(2), .text("two")])
        let select = "SELECT text FROM notes WHERE id = ?"
        #expect(try database.query(select, [.integer(2)]) == [[.text("two")]])
        #expect(try database.query(select, [.integer(1)]) == [[.text("one")]])
        // More distinct statements than the cache keeps still run, and so do cached ones after.
        for value in 0..<300 {
            #expect(try database.query("SELECT \(value)") == [[.integer(Int64(value))]])
        }
        #expect(try database.query(select, [.integer(1)]) == [[.text("one")]])
        database.close()
        #expect(throws: SQLiteError.self) { try database.query(select, [.integer(1)]) }
    }

    @Test func rejectsAFileThatIsNotADatabase() throws {
        try Data("definitely not sqlite, just text that is long enough to look like a header".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: SQLiteError.self) { try SQLiteStore(path: path) }
    }
}
