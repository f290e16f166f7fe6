import Foundation
import ParleyCore
import ParleyNet
import ParleyStore
import ParleySync

/// One node of a cluster sharing PostgreSQL (`PostgresCluster`): sessions count against the
/// cluster-wide limits and claim their instance, whose writes are then fenced by the claim;
/// commands for an instance reach the node holding it through the cluster's outbox; a deleted
/// conversation's sessions end on every node; any node serves any recording; the node
/// publishes its live sessions' states for every node's operator console.
final class ClusterCoordinator: SessionCoordinator {
    private let cluster: PostgresCluster
    private let store: PostgresStore
    private let sessions: LiveSessions
    private let commands: NodeCommands
    private let settings: ServerSettings
    private let secret: String
    private let log: EventLog
    /// Publishes the live sessions' states from `join` until `leave`.
    private let statePublisher = Locked<SessionStatePublisher?>(nil)

    /// How long `liveView(of:)` waits for the owner's live status.
    static let statusTimeout = Duration.seconds(1)

    init(store: PostgresStore, sessions: LiveSessions, recordings: CallRecordings, settings: ServerSettings, secret: String, log: EventLog) {
        cluster = PostgresCluster(store: store)
        self.store = store
        self.sessions = sessions
        commands = NodeCommands(sessions: sessions, recordings: recordings)
        self.settings = settings
        self.secret = secret
        self.log = log
    }

    var isDraining: Bool { cluster.isDraining }

    var nodeID: String { cluster.nodeID }

    func join(nodeURL: String) async throws {
        let sessions = sessions
        let log = log
        try await cluster.start(
            nodeURL: nodeURL, handler: commands.carryOut,
            onDeclaredDead: {
                // Every instance this node held was taken over while it was silent.
                log.log("node.declared_dead", ["sessions": .number(Double(sessions.count))])
                for entry in sessions.all { entry.disconnect() }
            }
        )
        statePublisher.withLock { $0 = SessionStatePublisher(sessions: sessions, cluster: cluster, log: log) }
    }

    /// Marks the node draining (its heartbeat row, and `/readyz` answering 503, tell load
    /// balancers to send nothing more) and gives its live sessions up to
    /// `ServerSettings.drainSeconds` to end by themselves. Those still running afterwards are
    /// closed by the shutdown; their instances wait for their clients to reconnect elsewhere.
    func drain() async {
        await cluster.drain()
        log.log("node.draining", ["node": .string(cluster.nodeID), "sessions": .number(Double(sessions.count))])
        let deadline = ContinuousClock.now + .seconds(settings.drainSeconds)
        while sessions.count > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(100))
        }
        log.log("node.drained", ["node": .string(cluster.nodeID), "sessions_left": .number(Double(sessions.count))])
    }

    func leave() async {
        statePublisher.withLock { publisher in
            publisher?.stop()
            publisher = nil
        }
        await cluster.stop()
    }

    // MARK: Sessions

    func reserve(
        _ request: SessionAdmission.Request, store: any ParleyStore, limits: LiveSessions.Limits
    ) async throws(SessionAdmission.Refusal) -> SessionReservation {
        let admissionID = RealtimeID.session()
        let clusterLimits = ClusterSessionLimits(maximum: settings.clusterMaximumSessions, perUser: limits.perUser, perToken: limits.perToken)
        let claim: InstanceClaim?
        do {
            let admission = try await cluster.admitSession(id: admissionID, instanceID: request.instanceID, owner: request.owner, limits: clusterLimits)
            if let refusal = LiveSessions.Refusal(admission) { throw SessionAdmission.Refusal.limit(refusal) }
            claim = try await claimIfAllowed(request.instanceID, caller: request.caller, store: store)
        } catch let refusal as SessionAdmission.Refusal {
            throw refusal
        } catch {
            await cluster.sessionEnded(id: admissionID)
            log.log("session.admission_failed", ["door": .string(request.door), "problem": .string("\(error)")])
            throw .storageUnavailable
        }
        if let claim, let previous = claim.previousOwner {
            // The old owner closes its session; this one need not wait for it.
            let cluster = cluster
            Task { _ = try? await cluster.send(.release, instanceID: claim.instanceID, epoch: claim.epoch, to: previous) }
        }
        let cluster = cluster
        return SessionReservation(
            store: claim.map(cluster.store(for:)) ?? store, claimEpoch: claim?.epoch,
            release: {
                if let claim { await cluster.release(claim) }
                await cluster.sessionEnded(id: admissionID)
            }
        )
    }

    /// Claims the instance the client asks for, unless its token may not join it (the session
    /// setup then refuses it; it must not take the instance from its rightful client).
    private func claimIfAllowed(_ instanceID: String?, caller: Caller?, store: any ParleyStore) async throws -> InstanceClaim? {
        guard let instanceID else { return nil }
        if case .client(let claims)? = caller {
            guard let instance = try await store.instance(id: instanceID), claims.mayJoin(instance) else { return nil }
        }
        return try await cluster.claim(instanceID: instanceID)
    }

    func allowTokenMint(from address: String) async throws -> Bool {
        try await cluster.allowTokenMint(key: address, perMinute: settings.tokenMintsPerMinute)
    }

    // MARK: Instances

    /// The status and owner the database holds; while the instance is live, its owner reports
    /// the session's status (`listening`, `thinking`, `speaking`) — this node at once, another
    /// through a `status` command — so every node shows the same. An owner that does not answer
    /// within `statusTimeout` leaves the database's `live`.
    func liveView(of instance: InstanceRecord) async throws -> InstanceLiveView {
        let ownership = try await cluster.ownership(instanceID: instance.id)
        var status = ownership?.status ?? instance.status
        if status == "live", let ownership, let owner = ownership.ownerNode,
           case .status(let live)? = try? await cluster.send(.status, instanceID: instance.id, epoch: ownership.epoch, to: owner, timeout: Self.statusTimeout) {
            status = live
        }
        return InstanceLiveView(status: status, ownerNode: ownership?.ownerNode, ownerURL: ownership?.ownerURL)
    }

    func interrupt(instanceID: String) async throws -> Bool {
        guard let ownership = try await cluster.ownership(instanceID: instanceID),
              ownership.status == "live", let owner = ownership.ownerNode else { return false }
        do {
            return try await cluster.send(.interrupt, instanceID: instanceID, epoch: ownership.epoch, to: owner) == .done
        } catch let error as ClusterError {
            throw CoordinationError(code: error.code.rawValue, message: error.message)
        }
    }

    /// The owner closes the session and its socket, then the instance is ended. An owner that
    /// does not answer is fenced off: its writes are refused.
    func end(instanceID: String) async throws -> Bool {
        guard let ownership = try await cluster.ownership(instanceID: instanceID) else { return false }
        var ownerActed = true
        if ownership.status == "live", let owner = ownership.ownerNode {
            do {
                _ = try await cluster.send(.end, instanceID: instanceID, epoch: ownership.epoch, to: owner)
            } catch is ClusterError {
                ownerActed = false
            }
        }
        try await cluster.end(instanceID: instanceID, fencingOwner: !ownerActed)
        return true
    }

    // MARK: Conversations

    /// Ends this node's sessions of the conversation, then has every other live node end its
    /// own and remove its recording; a node that does not answer in time is logged (its
    /// sessions' writes then fail against the deleted conversation, and its copy of the
    /// recording stays).
    func endSessions(conversationID: String) async {
        await commands.endSessions(conversationID: conversationID)
        let nodes = (try? await cluster.otherLiveNodes()) ?? []
        await withTaskGroup(of: Void.self) { group in
            for node in nodes {
                group.addTask { [cluster, log] in
                    do {
                        _ = try await cluster.send(.endConversation, instanceID: conversationID, epoch: 0, to: node.id)
                    } catch {
                        log.log("conversation.delete_unacknowledged", ["conversation": .string(conversationID), "node": .string(node.id)])
                    }
                }
            }
        }
    }

    // MARK: Sessions (the operator console)

    func interrupt(sessionID: String, on nodeID: String) async throws -> Bool {
        try await send(.interruptSession, sessionID: sessionID, to: nodeID)
    }

    func end(sessionID: String, on nodeID: String) async throws -> Bool {
        try await send(.endSession, sessionID: sessionID, to: nodeID)
    }

    /// The store's open calls whose node is alive (a dead node's calls never ended), with the
    /// states their nodes published; `unknown` for a call whose node has not published it yet.
    func otherNodesLiveSessions() async throws -> [RemoteLiveSession] {
        let nodes = Set(try await cluster.otherLiveNodes().map(\.id))
        guard !nodes.isEmpty else { return [] }
        let states = try await cluster.otherNodesSessionStates()
        return try await store.calls(CallQuery(isLive: true, limit: 1_000)).calls.filter { nodes.contains($0.nodeID) }.map {
            RemoteLiveSession(call: $0, state: states[$0.id] ?? "unknown")
        }
    }

    private func send(_ kind: ClusterCommand.Kind, sessionID: String, to nodeID: String) async throws -> Bool {
        do {
            return try await cluster.send(kind, instanceID: sessionID, epoch: 0, to: nodeID) == .done
        } catch let error as ClusterError {
            throw CoordinationError(code: error.code.rawValue, message: error.message)
        }
    }

    func recordingElsewhere(conversationID: String, range: String?) async -> HTTPResponse? {
        let nodes = (try? await cluster.otherLiveNodes()) ?? []
        return await RecordingRelay.fetch(conversationID: conversationID, range: range, from: nodes, secret: secret)
    }
}
