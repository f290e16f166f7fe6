import Foundation
import ParleyNet
import ParleyStore

/// How this node works with the others that serve the same agents: alone (`LocalCoordinator`,
/// the default, on SQLite) or as one node of a cluster sharing PostgreSQL (`ClusterCoordinator`).
///
/// Routes and doors ask the coordinator whatever depends on the other nodes — whether a session
/// may start, where an instance's live session is, how to reach a conversation's sessions or its
/// recording — and never branch on cluster mode themselves.
protocol SessionCoordinator: Sendable {
    /// Whether the node is shutting down: it refuses new sessions on every door.
    var isDraining: Bool { get }

    /// This node's name among the cluster's (`local` for a node alone).
    var nodeID: String { get }

    /// Takes part from now on (in a cluster: registers the node at `nodeURL` and carries out
    /// the commands other nodes send it).
    /// - Throws: when the node cannot register.
    func join(nodeURL: String) async throws

    /// Refuses new sessions from now on and gives the live ones the time the node allows to end.
    func drain() async

    /// Stops taking part; the node's instances wait for their clients to reconnect elsewhere.
    func leave() async

    /// Reserves a place for a session beyond this node's own count — in a cluster, the
    /// cluster-wide limits and the instance's claim — or says why there is none.
    /// - Parameters:
    ///   - store: the node's store; the reservation's store is the one the session writes through.
    ///   - limits: the per-user and per-token limits, which hold across nodes.
    func reserve(
        _ request: SessionAdmission.Request, store: any ParleyStore, limits: LiveSessions.Limits
    ) async throws(SessionAdmission.Refusal) -> SessionReservation

    /// Whether `address` may mint another token this minute (the bucket every node shares).
    /// - Throws: when the shared count cannot be reached.
    func allowTokenMint(from address: String) async throws -> Bool

    /// The instance as it is now: its live status and, in a cluster, the node holding it.
    func liveView(of instance: InstanceRecord) async throws -> InstanceLiveView

    /// Cancels the response in progress of the instance's live session, wherever it runs.
    /// - Returns: `false` when the instance has no live session.
    /// - Throws: `CoordinationError` when the node holding it does not answer.
    func interrupt(instanceID: String) async throws -> Bool

    /// Ends the instance's live session, wherever it runs, and then the instance.
    /// - Returns: `false` when there is no such instance.
    func end(instanceID: String) async throws -> Bool

    /// Ends every session of the conversation on every node and removes the copies of its
    /// recording the other nodes hold (this node's own copy is the caller's to remove).
    func endSessions(conversationID: String) async

    /// Cancels the response in progress of session `sessionID` on node `nodeID`.
    /// - Returns: `false` when no such session is live there.
    /// - Throws: `CoordinationError` when that node does not answer.
    func interrupt(sessionID: String, on nodeID: String) async throws -> Bool

    /// Ends session `sessionID` on node `nodeID` and closes its connection.
    /// - Returns: `false` when no such session is live there.
    /// - Throws: `CoordinationError` when that node does not answer.
    func end(sessionID: String, on nodeID: String) async throws -> Bool

    /// The sessions live now on the other nodes of the cluster, with what each is doing (none
    /// for a node alone).
    func otherNodesLiveSessions() async throws -> [RemoteLiveSession]

    /// The conversation's recording as another node serves it, when this node holds none.
    func recordingElsewhere(conversationID: String, range: String?) async -> HTTPResponse?
}

/// A session's place, held until `release()`.
struct SessionReservation: Sendable {
    /// The store the session writes through: in a cluster, fenced by its instance claim.
    var store: any ParleyStore
    /// The epoch of the instance claim, in a cluster.
    var claimEpoch: Int64?
    /// Gives the place back (and the instance claim).
    var release: @Sendable () async -> Void
}

/// A session live on another node: its stored call and what it is doing, as its node published.
struct RemoteLiveSession: Sendable {
    var call: CallRecord
    /// `listening`, `thinking`, `speaking`, `tool_running`; `unknown` until its node published it.
    var state: String
}

/// An instance's state as the coordinator sees it.
struct InstanceLiveView: Sendable, Equatable {
    /// `listening`, `thinking`, `speaking` while live; else the stored status.
    var status: String
    /// In a cluster: the node holding the live session, and its URL.
    var ownerNode: String? = nil
    var ownerURL: String? = nil
}

/// Why a command for an instance could not be carried out.
struct CoordinationError: Error, Sendable {
    /// A stable code (`owner_unreachable`, `stopped`).
    var code: String
    var message: String
}
