import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyStore

/// Two cluster nodes in one process on one real PostgreSQL: claims and epochs, commands
/// through the outbox and NOTIFY, the cluster-wide limits under racing callers, the sweeper.
@Suite(.throwawayPostgres) struct PostgresClusterTests {
    /// Two started nodes on a fresh database, each reporting the commands it carries out.
    struct TwoNodes {
        let store: PostgresStore
        let a: PostgresCluster
        let b: PostgresCluster
        let commandsOnA: AsyncStream<ClusterCommand>

        static func start(url: String) async throws -> TwoNodes {
            let store = try PostgresStore(url: url)
            let (commands, received) = AsyncStream.makeStream(of: ClusterCommand.self, bufferingPolicy: .unbounded)
            let a = PostgresCluster(store: store)
            let b = PostgresCluster(store: store)
            try await a.start(nodeURL: "http://127.0.0.2:8080") { command in
                received.yield(command)
                return command.kind == .status ? .status("speaking") : .done
            }
            try await b.start(nodeURL: "http://127.0.0.3:8080") { _ in .notConnected }
            return TwoNodes(store: store, a: a, b: b, commandsOnA: commands)
        }

        func stop() async {
            await a.stop()
            await b.stop()
            await store.close()
        }

        /// An instance waiting for its first connection.
        func instance(_ id: String) async throws -> String {
            try await store.ensureConversation(id: "conv_\(id)", agentID: "agent_1")
            try await store.saveInstance(InstanceRecord(id: id, agentID: "agent_1", userID: "ada", conversationID: "conv_\(id)", status: "waiting", createdAt: Date()))
            return id
        }
    }

    /// The next command node A carried out, or `nil` after `seconds`.
    static func next(_ commands: AsyncStream<ClusterCommand>, within seconds: Int = 30) async -> ClusterCommand? {
        await withTaskGroup(of: ClusterCommand?.self) { group in
            group.addTask {
                var iterator = commands.makeAsyncIterator()
                return await iterator.next()
            }
            group.addTask {
                try? await Task.sleep(for: TestDeadline.seconds(Double(seconds)))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    static func item(_ id: String, instance: String) -> ItemRecord {
        ItemRecord(id: id, conversationID: "conv_\(instance)", message: .user(id), createdAt: Date())
    }

    @Test func eachClaimRaisesTheEpochAndTheStaleOwnersWritesAreRefused() async throws {
        let nodes = try await TwoNodes.start(url: try await StoreEngine.postgres.freshLocation().address)
        let instance = try await nodes.instance("inst_1")

        let first = try #require(try await nodes.a.claim(instanceID: instance))
        #expect(first.epoch == 1 && first.previousOwner == nil)
        try await nodes.a.store(for: first).appendItem(Self.item("item_a1", instance: instance))
        #expect(try await nodes.b.ownership(instanceID: instance) == InstanceOwnership(status: "live", ownerNode: nodes.a.nodeID, ownerURL: "http://127.0.0.2:8080", epoch: 1))

        let second = try #require(try await nodes.b.claim(instanceID: instance))
        #expect(second.epoch == 2 && second.previousOwner == nodes.a.nodeID)
        await #expect(throws: ClusterError.self) { try await nodes.a.store(for: first).appendItem(Self.item("item_a2", instance: instance)) }
        await #expect(throws: ClusterError.self) { try await nodes.a.store(for: first).deleteItem(conversationID: "conv_\(instance)", id: "item_a1") }
        try await nodes.b.store(for: second).appendItem(Self.item("item_b1", instance: instance))
        #expect(try await nodes.store.items(conversationID: "conv_\(instance)").map(\.id) == ["item_a1", "item_b1"])

        // The old owner's release changes nothing; the new owner's lets the instance wait.
        await nodes.a.release(first)
        #expect(try await nodes.a.ownership(instanceID: instance)?.ownerNode == nodes.b.nodeID)
        await nodes.b.release(second)
        #expect(try await nodes.a.ownership(instanceID: instance)?.status == "waiting")

        try await nodes.a.end(instanceID: instance, fencingOwner: false)
        #expect(try await nodes.a.claim(instanceID: instance) == nil, "an ended instance was claimed")
        #expect(try await nodes.a.claim(instanceID: "inst_missing") == nil)
        await nodes.stop()
    }

    @Test func aCommandReachesTheOwnerAndTheSenderGetsItsAcknowledgement() async throws {
        let nodes = try await TwoNodes.start(url: try await StoreEngine.postgres.freshLocation().address)
        let instance = try await nodes.instance("inst_2")
        let claim = try #require(try await nodes.a.claim(instanceID: instance))
        #expect(try await nodes.b.send(.interrupt, instanceID: instance, epoch: claim.epoch, to: nodes.a.nodeID) == .done)
        let command = await Self.next(nodes.commandsOnA)
        #expect(command?.kind == .interrupt && command?.instanceID == instance && command?.epoch == claim.epoch)
        // B answers for itself without the database.
        #expect(try await nodes.b.send(.end, instanceID: instance, epoch: claim.epoch, to: nodes.b.nodeID) == .notConnected)
        await nodes.stop()
    }

    @Test func theOwnerReportsItsLiveStatusThroughTheOutbox() async throws {
        let url = try await StoreEngine.postgres.freshLocation().address
        let nodes = try await TwoNodes.start(url: url)
        let instance = try await nodes.instance("inst_status")
        let claim = try #require(try await nodes.a.claim(instanceID: instance))
        #expect(try await nodes.b.send(.status, instanceID: instance, epoch: claim.epoch, to: nodes.a.nodeID) == .status("speaking"))
        #expect(await Self.next(nodes.commandsOnA)?.kind == .status)
        let stored = try PostgresConnection(url: url).query("SELECT kind, result FROM commands WHERE instance_id = $1", [instance]).rows
        #expect(stored.map { $0.compactMap { $0 } } == [["status", "status=speaking"]])
        await nodes.stop()
    }

    @Test func aNodeThatStopsLetsGoOfItsInstances() async throws {
        let nodes = try await TwoNodes.start(url: try await StoreEngine.postgres.freshLocation().address)
        let instance = try await nodes.instance("inst_stopping")
        _ = try #require(try await nodes.a.claim(instanceID: instance))
        await nodes.a.stop()
        let ownership = try await nodes.b.ownership(instanceID: instance)
        #expect(ownership?.status == "waiting" && ownership?.ownerNode == nil)
        // The next connection claims it as a fresh one: no previous owner to tell.
        #expect(try await nodes.b.claim(instanceID: instance)?.previousOwner == nil)
        await nodes.stop()
    }

    @Test func aCommandForANodeThatNeverAnswersFailsClearly() async throws {
        let nodes = try await TwoNodes.start(url: try await StoreEngine.postgres.freshLocation().address)
        let error = await #expect(throws: ClusterError.self) {
            try await nodes.b.send(.interrupt, instanceID: "inst_3", epoch: 1, to: "node_gone")
        }
        #expect(error?.code == .ownerUnreachable)
        #expect(error?.message == "Node node_gone, which holds instance inst_3, did not answer within 5.0 seconds.")
        await nodes.stop()
    }

    @Test func commandsWrittenWhileTheOwnerWasNotListeningAreCarriedOutWhenItListensAgain() async throws {
        // A server of its own: the restart must not disturb the suite's other tests.
        try await ThrowawayPostgres.with { server in
            let url = try await server.createDatabase()
            let nodes = try await TwoNodes.start(url: url)
            // A command whose NOTIFY never went out (as when the owner's LISTEN is down).
            try PostgresConnection(url: url).query(
                "INSERT INTO commands(id, node_id, sender_node, instance_id, kind, epoch, created_at) VALUES('cmd_missed', $1, $2, 'inst_4', 'interrupt', 3, \(PostgresCluster.now))",
                [nodes.a.nodeID, nodes.b.nodeID]
            )
            try await server.restart()
            let command = await Self.next(nodes.commandsOnA)
            #expect(command == ClusterCommand(id: "cmd_missed", kind: .interrupt, instanceID: "inst_4", epoch: 3))
            await nodes.stop()
        }
    }

    @Test func racingAdmissionsNeverExceedTheClusterMaximum() async throws {
        let nodes = try await TwoNodes.start(url: try await StoreEngine.postgres.freshLocation().address)
        let maximum = 7
        let admitted = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<40 {
                let node = index.isMultiple(of: 2) ? nodes.a : nodes.b
                group.addTask { try await node.admitSession(id: "sess_\(index)", instanceID: nil, limits: Self.limits(maximum)) == .admitted }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(admitted == maximum)
        #expect(try await nodes.a.admitSession(id: "sess_late", instanceID: nil, limits: Self.limits(maximum)) == .clusterFull(maximum: maximum))
        await nodes.a.sessionEnded(id: "sess_0")
        await nodes.b.sessionEnded(id: "sess_1")
        #expect(try await nodes.a.admitSession(id: "sess_late", instanceID: nil, limits: Self.limits(maximum)) == .admitted)
        await nodes.stop()
    }

    static func limits(_ maximum: Int?, perUser: Int = 100, perToken: Int = 100) -> ClusterSessionLimits {
        ClusterSessionLimits(maximum: maximum, perUser: perUser, perToken: perToken)
    }

    @Test func oneUsersSessionsAreCappedAcrossNodesAndEachTokenWithinThem() async throws {
        let nodes = try await TwoNodes.start(url: try await StoreEngine.postgres.freshLocation().address)
        let limits = Self.limits(nil, perUser: 3, perToken: 2)
        func admit(_ node: PostgresCluster, _ id: String, user: String, token: String) async throws -> ClusterAdmission {
            try await node.admitSession(id: id, instanceID: nil, owner: SessionOwner(user: user, tokenID: token), limits: limits)
        }
        #expect(try await admit(nodes.a, "sess_a1", user: "alice", token: "tok_1") == .admitted)
        #expect(try await admit(nodes.b, "sess_b1", user: "alice", token: "tok_1") == .admitted)
        #expect(try await admit(nodes.a, "sess_a2", user: "alice", token: "tok_1") == .tokenLimit(maximum: 2), "a token's limit spans nodes")
        #expect(try await admit(nodes.b, "sess_b2", user: "alice", token: "tok_2") == .admitted)
        #expect(try await admit(nodes.a, "sess_a3", user: "alice", token: "tok_3") == .userLimit(maximum: 3), "a user's limit spans nodes")
        #expect(try await admit(nodes.a, "sess_a4", user: "bob", token: "tok_4") == .admitted, "another user has limits of their own")
        #expect(try await nodes.a.admitSession(id: "sess_backend", instanceID: nil, limits: limits) == .admitted, "the backend counts against no user")
        await nodes.b.sessionEnded(id: "sess_b1")
        #expect(try await admit(nodes.a, "sess_a3", user: "alice", token: "tok_3") == .admitted)
        await nodes.stop()
    }

    @Test func theTokenBucketIsSharedByEveryNode() async throws {
        let nodes = try await TwoNodes.start(url: try await StoreEngine.postgres.freshLocation().address)
        let allowed = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<12 {
                let node = index.isMultiple(of: 2) ? nodes.a : nodes.b
                group.addTask { try await node.allowTokenMint(key: "127.0.0.1", perMinute: 5) }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(allowed == 5)
        #expect(try await nodes.b.allowTokenMint(key: "10.0.0.9", perMinute: 5), "another address has a bucket of its own")
        await nodes.stop()
    }

    @Test func theSweeperDeclaresASilentNodeDeadAndItsInstancesLost() async throws {
        let location = try await StoreEngine.postgres.freshLocation()
        let nodes = try await TwoNodes.start(url: location.address)
        // A node that registered and went silent (no heartbeat runs for it).
        let silent = PostgresCluster(store: nodes.store)
        try await silent.register(nodeURL: "http://127.0.0.4:8080")
        let instance = try await nodes.instance("inst_5")
        let claim = try #require(try await silent.claim(instanceID: instance))
        #expect(try await silent.admitSession(id: "sess_silent", instanceID: instance, limits: Self.limits(1)) == .admitted)
        #expect(try await nodes.b.sweep().isEmpty, "a node silent for less than 10 s was declared dead")

        // Its last heartbeat a minute ago, as if it had been killed then.
        try PostgresConnection(url: location.address).query(
            "UPDATE nodes SET heartbeat_at = heartbeat_at - 60 WHERE id = $1", [silent.nodeID]
        )
        #expect(try await nodes.b.sweep() == [silent.nodeID])
        let ownership = try await nodes.b.ownership(instanceID: instance)
        #expect(ownership?.status == "lost" && ownership?.ownerNode == nil && ownership?.epoch == claim.epoch + 1)
        await #expect(throws: ClusterError.self) { try await silent.store(for: claim).appendItem(Self.item("item_late", instance: instance)) }
        #expect(try await nodes.b.admitSession(id: "sess_on_b", instanceID: nil, limits: Self.limits(1)) == .admitted, "the dead node's session still counts")
        // Reconnecting through any node continues the instance.
        #expect(try await nodes.b.claim(instanceID: instance)?.epoch == claim.epoch + 2)
        await nodes.stop()
    }
}
