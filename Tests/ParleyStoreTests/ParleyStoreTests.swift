import Foundation
import ParleyCore
import Testing
@testable import ParleyStore

@Suite struct ParleyStoreTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    var path: String { directory.appendingPathComponent("parley.sqlite").path }

    @Test func agentsRoundTripAndSurviveReopening() throws {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        do {
            let store = try ParleyStore(path: path)
            try store.saveAgent(AgentRecord(id: "agent_1", document: .object(["name": .string("Ada")]), createdAt: now, updatedAt: now))
            try store.saveAgent(AgentRecord(id: "agent_2", document: .object(["name": .string("Bob")]), createdAt: now.addingTimeInterval(1), updatedAt: now))
            try store.saveAgent(AgentRecord(id: "agent_1", document: .object(["name": .string("Ada 2")]), createdAt: now, updatedAt: now.addingTimeInterval(5)))
        }
        let reopened = try ParleyStore(path: path)
        #expect(try reopened.agents().map(\.id) == ["agent_1", "agent_2"])
        #expect(try reopened.agent(id: "agent_1")?.document["name"]?.stringValue == "Ada 2")
        #expect(try reopened.deleteAgent(id: "agent_1"))
        #expect(try !reopened.deleteAgent(id: "agent_1"))
        #expect(try reopened.agent(id: "agent_1") == nil)
    }

    @Test func itemsKeepCompletionOrderAndReplaceInPlace() throws {
        let store = try ParleyStore(path: path)
        let messages: [ChatMessage] = [
            .user("What time is it?"),
            .assistant(text: "", toolCalls: [ToolCall(id: "call_1", name: "get_current_time", arguments: "{}")]),
            .tool(callID: "call_1", content: "12:00"),
            .assistant(text: "It is noon", toolCalls: [], interrupted: false),
        ]
        for (index, message) in messages.enumerated() {
            try store.appendItem(ItemRecord(id: "item_\(index)", conversationID: "conv_1", message: message, createdAt: Date()))
        }
        try store.appendItem(ItemRecord(id: "item_3", conversationID: "conv_1", message: .assistant(text: "It is", toolCalls: [], interrupted: true), createdAt: Date()))
        let items = try store.items(conversationID: "conv_1")
        #expect(items.map(\.id) == ["item_0", "item_1", "item_2", "item_3"])
        #expect(items.last?.message == .assistant(text: "It is", toolCalls: [], interrupted: true))
        #expect(try store.deleteItem(id: "item_0"))
        #expect(try store.items(conversationID: "conv_1").count == 3)
        #expect(try store.integrityCheck())
    }

    @Test func instancesTrackStatus() throws {
        let store = try ParleyStore(path: path)
        try store.ensureConversation(id: "conv_9", agentID: "agent_1")
        try store.saveInstance(InstanceRecord(id: "inst_1", agentID: "agent_1", userID: "u", conversationID: "conv_9", status: "waiting", createdAt: Date()))
        try store.setInstanceStatus(id: "inst_1", status: "ended")
        #expect(try store.instance(id: "inst_1")?.status == "ended")
        #expect(try store.instance(id: "missing") == nil)
        #expect(try store.conversationExists(id: "conv_9"))
    }

    @Test func usesWriteAheadLogAndMigratesOnce() throws {
        _ = try ParleyStore(path: path)
        let store = try ParleyStore(path: path)
        #expect(try store.database.query("PRAGMA journal_mode").first?.first?.text == "wal")
        #expect(try store.database.query("PRAGMA user_version").first?.first?.integer == Int64(StoreMigrations.steps.count))
    }

    @Test func concurrentAppendsAreAllKept() async throws {
        let store = try ParleyStore(path: path)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    for index in 0..<50 {
                        try store.appendItem(ItemRecord(id: "item_\(writer)_\(index)", conversationID: "conv_\(writer % 2)", message: .user("hello \(index)"), createdAt: Date()))
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try store.items(conversationID: "conv_0").count + store.items(conversationID: "conv_1").count == 400)
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
        #expect(throws: SQLiteError.self) { try ParleyStore(path: path) }
    }
}
