import Foundation
import ParleyNet
import ParleySync
import ParleyStore

/// A node alone: every session, instance and recording is here, and the token bucket is this
/// process's own. The coordinator of a server on SQLite.
final class LocalCoordinator: SessionCoordinator {
    private let sessions: LiveSessions
    private let store: any ParleyStore
    private let tokenRateLimiter: RateLimiter
    private let commands: NodeCommands
    private let draining = Locked(false)

    init(sessions: LiveSessions, store: any ParleyStore, recordings: CallRecordings, tokenMintsPerMinute: Int) {
        self.sessions = sessions
        self.store = store
        tokenRateLimiter = RateLimiter(perMinute: tokenMintsPerMinute)
        commands = NodeCommands(sessions: sessions, recordings: recordings)
    }

    var isDraining: Bool { draining.withLock { $0 } }

    var nodeID: String { "local" }

    func interrupt(sessionID: String, on nodeID: String) async throws -> Bool {
        nodeID == self.nodeID ? await commands.interrupt(sessionID: sessionID) : false
    }

    func end(sessionID: String, on nodeID: String) async throws -> Bool {
        nodeID == self.nodeID ? await commands.end(sessionID: sessionID) : false
    }

    func otherNodesLiveSessions() async throws -> [RemoteLiveSession] { [] }

    func join(nodeURL: String) async throws {}

    /// Refuses new sessions; a node alone has nowhere to send its clients, so it does not wait.
    func drain() async { draining.withLock { $0 = true } }

    func leave() async {}

    func reserve(
        _ request: SessionAdmission.Request, store: any ParleyStore, limits: LiveSessions.Limits
    ) async throws(SessionAdmission.Refusal) -> SessionReservation {
        SessionReservation(store: store, claimEpoch: nil, release: {})
    }

    func allowTokenMint(from address: String) async throws -> Bool { tokenRateLimiter.allow(address) }

    func liveView(of instance: InstanceRecord) async throws -> InstanceLiveView {
        InstanceLiveView(status: sessions.status(instanceID: instance.id) ?? instance.status)
    }

    func interrupt(instanceID: String) async throws -> Bool {
        await commands.interrupt(instanceID: instanceID)
    }

    func end(instanceID: String) async throws -> Bool {
        guard try await store.instance(id: instanceID) != nil else { return false }
        _ = await commands.end(instanceID: instanceID)
        try await store.setInstanceStatus(id: instanceID, status: "ended")
        return true
    }

    func endSessions(conversationID: String) async {
        await commands.endSessions(conversationID: conversationID)
    }

    func recordingElsewhere(conversationID: String, range: String?) async -> HTTPResponse? { nil }
}
