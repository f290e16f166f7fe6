import Foundation
import ParleyCore
import ParleyStore
import ParleyTesting
import Testing
@testable import ParleyServer

/// The two session coordinators keep one contract: a node alone (`LocalCoordinator`, SQLite)
/// and a node of a cluster (`ClusterCoordinator`, on a real PostgreSQL) answer the routes'
/// and doors' questions the same way, so no route needs to know which one it runs with.
@Suite struct SessionCoordinatorTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case local, cluster
        var testDescription: String { rawValue }
    }

    /// A coordinator of `kind` on a fresh store holding instance `inst_1` of user `ada`, waiting.
    struct Node {
        let coordinator: any SessionCoordinator
        let store: any ParleyStore
        let directory: URL

        static let instanceID = "inst_1"
        static let conversationID = "conv_1"

        static func with(_ kind: Kind, _ body: (Node) async throws -> Void) async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-coordinator-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            var settings = ServerSettings()
            settings.dataDirectory = directory
            settings.tokenMintsPerMinute = 3
            let sessions = LiveSessions(limits: LiveSessions.Limits(maximum: 10))
            let recordings = CallRecordings(dataDirectory: directory, recordsByDefault: false, log: .silent)
            switch kind {
            case .local:
                let store = try SQLiteStore(path: directory.appendingPathComponent("parley.sqlite").path)
                let node = Node(
                    coordinator: LocalCoordinator(sessions: sessions, store: store, recordings: recordings, tokenMintsPerMinute: 3),
                    store: store, directory: directory
                )
                try await node.run(body)
            case .cluster:
                try await ThrowawayPostgres.with { postgres in
                    let store = try PostgresStore(url: try await postgres.createDatabase())
                    let coordinator = ClusterCoordinator(store: store, sessions: sessions, recordings: recordings, settings: settings, secret: "s3cret", log: .silent)
                    try await coordinator.join(nodeURL: "http://127.0.0.1:9")
                    let node = Node(coordinator: coordinator, store: store, directory: directory)
                    do { try await node.run(body) } catch { await coordinator.leave(); throw error }
                    await coordinator.leave()
                    await store.close()
                }
            }
        }

        private func run(_ body: (Node) async throws -> Void) async throws {
            try await store.ensureConversation(id: Self.conversationID, agentID: "agent_1")
            try await store.saveInstance(InstanceRecord(
                id: Self.instanceID, agentID: "agent_1", userID: "ada", conversationID: Self.conversationID, status: "waiting", createdAt: Date()
            ))
            try await body(self)
        }

        func reserve(instanceID: String? = Node.instanceID) async throws -> SessionReservation {
            try await coordinator.reserve(
                SessionAdmission.Request(door: "websocket", owner: LiveSessions.Owner(user: "ada", tokenID: "tok_1"), instanceID: instanceID, caller: nil),
                store: store, limits: LiveSessions.Limits(maximum: 10)
            )
        }
    }

    @Test(arguments: Kind.allCases)
    func aReservedSessionWritesItsInstancesItemsAndGivesItsPlaceBack(_ kind: Kind) async throws {
        try await Node.with(kind) { node in
            let reservation = try await node.reserve()
            try await reservation.store.appendItem(ItemRecord(id: "item_1", conversationID: Node.conversationID, message: .user("hello"), createdAt: Date()))
            await reservation.release()
            let again = try await node.reserve()
            try await again.store.appendItem(ItemRecord(id: "item_2", conversationID: Node.conversationID, message: .user("again"), createdAt: Date()))
            await again.release()
            #expect(try await node.store.items(conversationID: Node.conversationID).map(\.id) == ["item_1", "item_2"])
        }
    }

    @Test(arguments: Kind.allCases)
    func anInstanceWithoutALiveSessionShowsItsStoredStatusAndCannotBeInterrupted(_ kind: Kind) async throws {
        try await Node.with(kind) { node in
            let instance = try #require(try await node.store.instance(id: Node.instanceID))
            #expect(try await node.coordinator.liveView(of: instance).status == "waiting")
            #expect(try await node.coordinator.interrupt(instanceID: Node.instanceID) == false)
            #expect(try await node.coordinator.interrupt(instanceID: "inst_unknown") == false)
        }
    }

    @Test(arguments: Kind.allCases)
    func endingAnInstanceStoresItsEndAndAnUnknownOneIsNotFound(_ kind: Kind) async throws {
        try await Node.with(kind) { node in
            let endedKnown = try await node.coordinator.end(instanceID: Node.instanceID)
            let stored = try await node.store.instance(id: Node.instanceID)
            let endedUnknown = try await node.coordinator.end(instanceID: "inst_unknown")
            #expect(endedKnown && stored?.status == "ended")
            #expect(!endedUnknown)
        }
    }

    @Test(arguments: Kind.allCases)
    func tokenMintsAreCountedPerAddress(_ kind: Kind) async throws {
        try await Node.with(kind) { node in
            var allowed: [Bool] = []
            for _ in 0..<4 { allowed.append(try await node.coordinator.allowTokenMint(from: "198.51.100.7")) }
            #expect(allowed == [true, true, true, false])
            #expect(try await node.coordinator.allowTokenMint(from: "198.51.100.8"))
        }
    }

    @Test(arguments: Kind.allCases)
    func aDrainingNodeSaysSoAndARecordingNobodyHoldsIsNowhere(_ kind: Kind) async throws {
        try await Node.with(kind) { node in
            #expect(!node.coordinator.isDraining)
            await node.coordinator.endSessions(conversationID: Node.conversationID)
            #expect(await node.coordinator.recordingElsewhere(conversationID: Node.conversationID, range: nil) == nil)
            await node.coordinator.drain()
            #expect(node.coordinator.isDraining)
        }
    }
}
