import Foundation
import ParleyCore
import Testing
@testable import ParleyStore

/// The store's contract, run against both engines: SQLite and PostgreSQL.
@Suite(.throwawayPostgres) struct ParleyStoreTests {
    @Test(arguments: StoreEngine.allCases)
    func agentsRoundTripAndSurviveReopening(engine: StoreEngine) async throws {
        let location = try await engine.freshLocation()
        let now = Date(timeIntervalSince1970: 1_700_000_000.25)
        do {
            let store = try location.open()
            try await store.saveAgent(AgentRecord(id: "agent_1", document: .object(["name": .string("Ada")]), createdAt: now, updatedAt: now))
            try await store.saveAgent(AgentRecord(id: "agent_2", document: .object(["name": .string("Bob")]), createdAt: now.addingTimeInterval(1), updatedAt: now))
            try await store.saveAgent(AgentRecord(id: "agent_1", document: .object(["name": .string("Ada 2")]), createdAt: now, updatedAt: now.addingTimeInterval(5)))
            await store.close()
        }
        let reopened = try location.open()
        #expect(try await reopened.agents().map(\.id) == ["agent_1", "agent_2"])
        let first = try #require(try await reopened.agent(id: "agent_1"))
        #expect(first.document["name"]?.stringValue == "Ada 2")
        #expect(first.createdAt == now && first.updatedAt == now.addingTimeInterval(5))
        #expect(try await reopened.deleteAgent(id: "agent_1"))
        #expect(try await !reopened.deleteAgent(id: "agent_1"))
        #expect(try await reopened.agent(id: "agent_1") == nil)
        await reopened.close()
    }

    @Test(arguments: StoreEngine.allCases)
    func itemsKeepCompletionOrderAndReplaceInPlace(engine: StoreEngine) async throws {
        let store = try await engine.freshLocation().open()
        let messages: [ChatMessage] = [
            .user("What time is it?"),
            .assistant(text: "", toolCalls: [ToolCall(id: "call_1", name: "get_current_time", arguments: "{}")]),
            .tool(callID: "call_1", content: "12:00"),
            .assistant(text: "It is noon", toolCalls: [], interrupted: false),
        ]
        for (index, message) in messages.enumerated() {
            try await store.appendItem(ItemRecord(id: "item_\(index)", conversationID: "conv_1", message: message, createdAt: Date()))
        }
        try await store.appendItem(ItemRecord(id: "item_3", conversationID: "conv_1", message: .assistant(text: "It is", toolCalls: [], interrupted: true), createdAt: Date()))
        let items = try await store.items(conversationID: "conv_1")
        #expect(items.map(\.id) == ["item_0", "item_1", "item_2", "item_3"])
        #expect(items.map(\.message).prefix(3) == messages.prefix(3))
        #expect(items.last?.message == .assistant(text: "It is", toolCalls: [], interrupted: true))
        #expect(try await store.conversationExists(id: "conv_1"))
        #expect(try await !store.deleteItem(conversationID: "conv_other", id: "item_0"))
        #expect(try await store.deleteItem(conversationID: "conv_1", id: "item_0"))
        #expect(try await !store.deleteItem(conversationID: "conv_1", id: "item_0"))
        #expect(try await store.items(conversationID: "conv_1").count == 3)
        #expect(try await store.items(conversationID: "conv_missing").isEmpty)
        await store.close()
    }

    @Test(arguments: StoreEngine.allCases)
    func instancesTrackStatus(engine: StoreEngine) async throws {
        let store = try await engine.freshLocation().open()
        let created = Date(timeIntervalSince1970: 1_700_000_123.5)
        try await store.ensureConversation(id: "conv_9", agentID: "agent_1")
        try await store.ensureConversation(id: "conv_9", agentID: "agent_1")
        try await store.saveInstance(InstanceRecord(id: "inst_1", agentID: "agent_1", userID: "u", conversationID: "conv_9", status: "waiting", createdAt: created))
        try await store.setInstanceStatus(id: "inst_1", status: "ended")
        #expect(try await store.instance(id: "inst_1") == InstanceRecord(id: "inst_1", agentID: "agent_1", userID: "u", conversationID: "conv_9", status: "ended", createdAt: created))
        #expect(try await store.instance(id: "missing") == nil)
        #expect(try await store.conversationExists(id: "conv_9"))
        #expect(try await !store.conversationExists(id: "conv_0"))
        await store.close()
    }

    @Test(arguments: StoreEngine.allCases)
    func deletingAConversationTakesItsItemsAndInstancesOnly(engine: StoreEngine) async throws {
        let store = try await engine.freshLocation().open()
        for conversation in ["conv_gone", "conv_kept"] {
            try await store.ensureConversation(id: conversation, agentID: "agent_1")
            try await store.saveInstance(InstanceRecord(id: "inst_\(conversation)", agentID: "agent_1", userID: "u", conversationID: conversation, status: "waiting", createdAt: Date()))
            try await store.appendItem(ItemRecord(id: "item_\(conversation)", conversationID: conversation, message: .user("hi"), createdAt: Date()))
        }
        #expect(try await store.deleteConversation(id: "conv_gone"))
        #expect(try await !store.deleteConversation(id: "conv_gone"))
        #expect(try await !store.conversationExists(id: "conv_gone"))
        #expect(try await store.items(conversationID: "conv_gone").isEmpty)
        #expect(try await store.instance(id: "inst_conv_gone") == nil)
        #expect(try await store.items(conversationID: "conv_kept").map(\.id) == ["item_conv_kept"])
        #expect(try await store.instance(id: "inst_conv_kept") != nil)
        await store.close()
    }

    @Test(arguments: StoreEngine.allCases)
    func migratesOnceToTheSameVersion(engine: StoreEngine) async throws {
        let location = try await engine.freshLocation()
        try await location.open().close()
        try await location.open().close()
        #expect(try location.schemaVersion() == StoreMigrations.steps.count)
    }

    @Test(arguments: StoreEngine.allCases)
    func concurrentAppendsAreAllKept(engine: StoreEngine) async throws {
        let store = try await engine.freshLocation().open()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    for index in 0..<50 {
                        try await store.appendItem(ItemRecord(id: "item_\(writer)_\(index)", conversationID: "conv_\(writer % 2)", message: .user("hello \(index)"), createdAt: Date()))
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await store.items(conversationID: "conv_0").count + store.items(conversationID: "conv_1").count == 400)
        await store.close()
    }

    @Test(arguments: StoreEngine.allCases)
    func aClosedStoreRefusesCalls(engine: StoreEngine) async throws {
        let store = try await engine.freshLocation().open()
        try await store.appendItem(ItemRecord(id: "item_1", conversationID: "conv_1", message: .user("hi"), createdAt: Date()))
        await store.close()
        await #expect(throws: (any Error).self) { try await store.items(conversationID: "conv_1") }
    }
}
