import Foundation
import ParleyCore
import Testing
@testable import ParleyStore

/// A database as the previous release left it (schema 2: items keyed by id alone) opened by
/// this one: every conversation and item is kept, in order, and ids are then per conversation.
@Suite(.throwawayPostgres) struct ItemKeyMigrationTests {
    /// The schema the previous release wrote.
    static let previousVersion = 2

    /// Rows the previous release would have stored: two conversations of two items each.
    static let rows: [(conversation: String, id: String, message: ChatMessage)] = [
        ("conv_a", "item_1", .user("What time is it?")),
        ("conv_b", "item_2", .user("Hello")),
        ("conv_a", "item_3", .assistant(text: "It is noon.", toolCalls: [], interrupted: false)),
        ("conv_b", "item_4", .assistant(text: "Hi there.", toolCalls: [], interrupted: true)),
    ]

    /// Writes a schema-2 database at `location` with `rows`, the way the previous release did.
    static func writePreviousRelease(at location: StoreLocation) throws {
        let payloads = try rows.map { String(decoding: try JSONEncoder().encode($0.message), as: UTF8.self) }
        switch location.engine {
        case .sqlite:
            let database = try SQLiteDatabase(path: location.address)
            for step in StoreMigrations.steps.prefix(previousVersion) { try database.execute(step.sqlite) }
            try database.execute("PRAGMA user_version = \(previousVersion)")
            for conversation in ["conv_a", "conv_b"] {
                try database.query("INSERT INTO conversations(id, agent_id, created_at) VALUES(?, NULL, 1)", [.text(conversation)])
            }
            for (row, payload) in zip(rows, payloads) {
                try database.query(
                    "INSERT INTO items(id, conversation_id, message, created_at) VALUES(?, ?, ?, 1)",
                    [.text(row.id), .text(row.conversation), .text(payload)]
                )
            }
        case .postgres:
            let connection = try PostgresConnection(url: location.address)
            for step in StoreMigrations.steps.prefix(previousVersion) { try connection.execute(step.postgres) }
            try connection.execute("CREATE TABLE parley_schema(version integer NOT NULL); INSERT INTO parley_schema VALUES(\(previousVersion))")
            for conversation in ["conv_a", "conv_b"] {
                try connection.query("INSERT INTO conversations(id, agent_id, created_at) VALUES($1, NULL, 1)", [conversation])
            }
            for (row, payload) in zip(rows, payloads) {
                try connection.query("INSERT INTO items(id, conversation_id, message, created_at) VALUES($1, $2, $3, 1)", [row.id, row.conversation, payload])
            }
        }
    }

    @Test(arguments: StoreEngine.allCases)
    func thePreviousReleasesItemsAreAllKeptAndIdsBecomePerConversation(engine: StoreEngine) async throws {
        let location = try await engine.freshLocation()
        try Self.writePreviousRelease(at: location)
        #expect(try location.schemaVersion() == Self.previousVersion)

        let store = try location.open()
        #expect(try location.schemaVersion() == StoreMigrations.steps.count)
        for conversation in ["conv_a", "conv_b"] {
            #expect(try await store.conversationExists(id: conversation))
            let expected = Self.rows.filter { $0.conversation == conversation }
            let items = try await store.items(conversationID: conversation)
            #expect(items.map(\.id) == expected.map(\.id))
            #expect(items.map(\.message) == expected.map(\.message))
        }
        // conv_b writing and deleting conv_a's item id touches only conv_b.
        try await store.appendItem(ItemRecord(id: "item_1", conversationID: "conv_b", message: .user("Overwritten?"), createdAt: Date()))
        #expect(try await store.items(conversationID: "conv_a").first?.message == .user("What time is it?"))
        #expect(try await store.items(conversationID: "conv_b").map(\.id) == ["item_2", "item_4", "item_1"])
        #expect(try await store.deleteItem(conversationID: "conv_b", id: "item_1"))
        #expect(try await store.items(conversationID: "conv_a").map(\.id) == ["item_1", "item_3"])
        // A new item after the migration comes after the old ones.
        try await store.appendItem(ItemRecord(id: "item_5", conversationID: "conv_a", message: .user("And now?"), createdAt: Date()))
        #expect(try await store.items(conversationID: "conv_a").map(\.id) == ["item_1", "item_3", "item_5"])
        await store.close()
    }
}
