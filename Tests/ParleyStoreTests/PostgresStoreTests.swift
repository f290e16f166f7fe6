import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyStore

/// What only the PostgreSQL engine has: a pool of connections shared by many tasks, a server
/// that can restart under it, nodes migrating together, URLs and unreachable servers.
@Suite(.throwawayPostgres) struct PostgresStoreTests {
    @Test func thePoolKeepsEachConversationsOrderUnderConcurrentWrites() async throws {
        let store = try await StoreEngine.postgres.freshLocation().open()
        let conversations = 32
        let itemsEach = 40
        try await withThrowingTaskGroup(of: Void.self) { group in
            for conversation in 0..<conversations {
                group.addTask {
                    for index in 0..<itemsEach {
                        try await store.appendItem(ItemRecord(
                            id: "item_\(conversation)_\(index)", conversationID: "conv_\(conversation)",
                            message: .user("turn \(index)"), createdAt: Date()
                        ))
                    }
                }
            }
            try await group.waitForAll()
        }
        for conversation in 0..<conversations {
            let items = try await store.items(conversationID: "conv_\(conversation)")
            #expect(items.map(\.id) == (0..<itemsEach).map { "item_\(conversation)_\($0)" }, "conversation \(conversation)")
        }
        await store.close()
    }

    @Test func aServerRestartMidRunLosesNoAcknowledgedWrite() async throws {
        // A server of its own: the restart must not disturb the suite's other tests.
        try await ThrowawayPostgres.with { server in
            let location = StoreLocation(engine: .postgres, address: try await server.createDatabase())
            let store = try location.open()
            let progress = WriteProgress()
            let writers = 6
            let written = try await withThrowingTaskGroup(of: (conversation: String, ids: [String]).self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        var acknowledged: [String] = []
                        while await !progress.isFinished {
                            let id = "item_\(writer)_\(acknowledged.count)"
                            try await store.appendItem(ItemRecord(id: id, conversationID: "conv_\(writer)", message: .user(id), createdAt: Date()))
                            acknowledged.append(id)
                            await progress.acknowledge()
                        }
                        return ("conv_\(writer)", acknowledged)
                    }
                }
                // Writes before, during and after the restart.
                try await progress.waitFor(acknowledged: 100)
                try await server.restart()
                let afterRestart = await progress.acknowledged
                try await progress.waitFor(acknowledged: afterRestart + 100)
                await progress.finish()
                return try await group.reduce(into: [String: [String]]()) { $0[$1.conversation] = $1.ids }
            }
            await store.close()

            let reopened = try location.open()
            #expect(written.count == writers)
            for (conversation, ids) in written {
                #expect(try await reopened.items(conversationID: conversation).map(\.id) == ids, "\(conversation)")
            }
            await reopened.close()
        }
    }

    @Test func aServerGoneForGoodFailsCallsAfterTheTimeoutOnceNotOncePerCall() async throws {
        let server = try await ThrowawayPostgres.start()
        let store = try PostgresStore(url: try await server.createDatabase(), connections: 2, reconnectTimeout: .seconds(1))
        try await store.ensureConversation(id: "conv_1", agentID: nil)
        await server.stop()
        let started = ContinuousClock.now
        let failures = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<12 {
                group.addTask {
                    (try? await store.appendItem(ItemRecord(id: "item_\(index)", conversationID: "conv_1", message: .user("lost"), createdAt: Date()))) == nil
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        let elapsed = ContinuousClock.now - started
        #expect(failures == 12)
        // One timeout for the whole outage; a timeout per call would take 6 s on 2 connections.
        #expect(elapsed < .seconds(4), "\(elapsed)")
        await store.close()
    }

    @Test func nodesStartingTogetherMigrateOnce() async throws {
        let location = try await StoreEngine.postgres.freshLocation()
        let stores = try await withThrowingTaskGroup(of: (any ParleyStore).self) { group in
            for _ in 0..<4 { group.addTask { try location.open() } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(try location.schemaVersion() == StoreMigrations.steps.count)
        try await stores[0].saveAgent(AgentRecord(id: "agent_1", document: .object([:]), createdAt: Date(), updatedAt: Date()))
        #expect(try await stores[3].agent(id: "agent_1") != nil)
        for store in stores { await store.close() }
    }

    @Test func aNewerSchemaIsRefused() async throws {
        let location = try await StoreEngine.postgres.freshLocation()
        try await location.open().close()
        try PostgresConnection(url: location.address).query("UPDATE parley_schema SET version = 99")
        #expect { try location.open() } throws: { error in
            (error as? PostgresError)?.message == "database schema 99 is newer than this Parley (\(StoreMigrations.steps.count))"
        }
    }

    @Test func urlsAreCheckedWithoutConnecting() {
        #expect(PostgresStore.problem(inURL: "postgresql://parley@db.internal:5432/parley?sslmode=require") == nil)
        #expect(PostgresStore.problem(inURL: "postgres://parley@db.internal/parley") == nil)
        #expect(PostgresStore.problem(inURL: "mysql://parley:hunter22@db/parley") == #""mysql://parley:***@db/parley" is not a postgresql:// URL"#)
        let problem = PostgresStore.problem(inURL: "postgresql://parley:hunter22@db/parley?colour=blue")
        #expect(problem?.hasPrefix(#""postgresql://parley:***@db/parley?colour=blue" is not a valid PostgreSQL URL: "#) == true, "\(problem ?? "nil")")
        #expect(problem?.contains("\n") == false)
    }

    @Test func anUnreachableServerIsOneClearLine() throws {
        let closed = try ClosedPort()
        let port = closed.port
        #expect { try PostgresStore(url: "postgresql://parley:hunter22@127.0.0.1:\(port)/parley") } throws: { error in
            let text = "\(error)"
            return text.hasPrefix("PostgreSQL: cannot connect to postgresql://parley:***@127.0.0.1:\(port)/parley: ")
                && text.contains("refused") && !text.contains("\n") && !text.contains("hunter22")
        }
    }
}

/// Counts acknowledged writes and lets the test wait for a count, without polling.
private actor WriteProgress {
    private(set) var acknowledged = 0
    private(set) var isFinished = false
    private var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    func acknowledge() {
        acknowledged += 1
        let ready = waiters.filter { $0.count <= acknowledged }
        waiters.removeAll { $0.count <= acknowledged }
        ready.forEach { $0.continuation.resume() }
    }

    func finish() { isFinished = true }

    /// Returns once `count` writes were acknowledged; throws after 60 s.
    nonisolated func waitFor(acknowledged count: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await self.wait(count) }
            group.addTask {
                try await Task.sleep(for: .seconds(60))
                throw CancellationError()
            }
            try await group.next()
            group.cancelAll()
        }
    }

    private func wait(_ count: Int) async {
        guard acknowledged < count else { return }
        await withCheckedContinuation { waiters.append((count, $0)) }
    }
}
