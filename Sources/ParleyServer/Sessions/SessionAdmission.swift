import Foundation
import ParleyCore
import ParleyStore
import ParleySync

/// The one way a session gets in, whatever door it arrives through (the realtime WebSocket, a
/// WebRTC call, a phone call), and the one way it leaves.
///
/// A door first `reserve`s a place: the node must not be draining, and the node's
/// `SessionCoordinator` reserves what lies beyond it — in a cluster, the session is registered
/// in the cluster-wide count (under the cluster maximum and its caller's per-user and per-token
/// limits on every node) and claims its instance, so its writes are fenced by the claim. The door then sets the session up with the reservation's `context`
/// (whose store is the fenced one) and `admit`s it on this node (the node's maximum and the
/// caller's limits). `end` undoes all of it, whatever ended the session.
struct SessionAdmission: Sendable {
    /// What a door knows of a session before setting it up.
    struct Request: Sendable {
        /// The door's name in metrics and logs: `websocket`, `webrtc`, `twilio`.
        var door: String
        /// Whom the session counts against (nil for the backend).
        var owner: LiveSessions.Owner?
        /// The instance the session joins, if any.
        var instanceID: String?
        /// Who opened it, when the door knows (a client token may only claim an instance it may join).
        var caller: Caller?
    }

    /// Why a session was not let in; each door says it in its own terms.
    enum Refusal: Error, Sendable, Equatable {
        /// The node is shutting down.
        case draining
        /// A session limit: the node's, the cluster's, or the caller's.
        case limit(LiveSessions.Refusal)
        /// The cluster's database could not be reached.
        case storageUnavailable

        /// The error code.
        var code: String {
            switch self {
            case .draining: "node_draining"
            case .limit(let limit): limit.code
            case .storageUnavailable: "session_setup_failed"
            }
        }

        /// The HTTP status: 503 when the node or cluster cannot take it, 429 for the caller's own limits.
        var httpStatus: Int {
            switch self {
            case .draining, .storageUnavailable: 503
            case .limit(let limit): limit.httpStatus
            }
        }

        /// The sentence a caller reads.
        var message: String {
            switch self {
            case .draining: "This node is shutting down; connect again to reach another node of the cluster."
            case .limit(let limit): limit.message
            case .storageUnavailable: "The cluster's database could not admit the session; try again shortly."
            }
        }
    }

    /// What a session hears when its instance was claimed by a newer connection, or its node
    /// was fenced off, and it may store nothing more: it ends at once.
    static let supersededError = RealtimeProtocolError(
        type: "server_error", code: "session_superseded",
        message: "This session's instance is now held by another connection (or this node lost its claim); nothing more can be saved here. Reconnect to continue."
    )

    /// The door the session came through.
    let door: String
    /// The context the session runs in: in cluster mode, its store writes through the instance claim.
    let context: ServerContext
    private let owner: LiveSessions.Owner?
    private let reservation: SessionReservation
    /// The write of the call's row, started by `admit` off the session's way in; `end` waits
    /// for it before it stores the call's end (a late first write would reopen the call).
    private let callStart = Locked<Task<Void, Never>?>(nil)

    /// The epoch of the session's instance claim, in cluster mode.
    var claimEpoch: Int64? { reservation.claimEpoch }

    /// Reserves a place for a session of `request`, or says why there is none (and counts the refusal).
    static func reserve(_ request: Request, context: ServerContext) async throws(Refusal) -> SessionAdmission {
        do throws(Refusal) {
            if let refusal = precheck(owner: request.owner, context: context) { throw refusal }
            let reservation = try await context.coordinator.reserve(request, store: context.store, limits: context.sessions.limits)
            var sessionContext = context
            sessionContext.store = reservation.store
            return SessionAdmission(door: request.door, context: sessionContext, owner: request.owner, reservation: reservation)
        } catch {
            context.metrics.doorRefused(door: request.door, reason: error.code)
            throw error
        }
    }

    /// Why a session of `owner` could not get in now, judged from this node alone (draining, or
    /// its limits); a door asks before it does the work of setting a session up.
    static func precheck(owner: LiveSessions.Owner?, context: ServerContext) -> Refusal? {
        if context.coordinator.isDraining { return .draining }
        return context.sessions.refusal(for: owner).map(Refusal.limit)
    }

    /// Registers the set-up session among this node's live sessions; `disconnect` is how the
    /// server ends it early (an interrupt from the operator, a superseded claim, shutdown).
    /// On a refusal the reservation is released.
    /// - Returns: the session's id.
    func admit(
        _ session: VoiceSession, instanceID: String?, conversationID: String?, disconnect: @escaping @Sendable () -> Void
    ) async throws(Refusal) -> String {
        let entry = LiveSessions.Entry(
            sessionID: RealtimeID.session(), instanceID: instanceID, session: session, disconnect: disconnect,
            conversationID: conversationID, claimEpoch: claimEpoch, owner: owner, door: door
        )
        if let refusal = context.sessions.admit(entry) {
            context.metrics.doorRefused(door: door, reason: refusal.code)
            await release()
            throw .limit(refusal)
        }
        context.metrics.sessionOpened()
        if let call = call(of: entry) {
            callStart.withLock { $0 = Task { await save(call) } }
        }
        return entry.sessionID
    }

    /// Ends an admitted session: off this node's list and the metrics, its call's end stored,
    /// then out of the cluster.
    func end(sessionID: String) async {
        let entry = context.sessions.entry(sessionID: sessionID)
        let activity = context.sessions.remove(sessionID: sessionID)
        context.metrics.sessionClosed()
        await callStart.withLock { $0 }?.value
        if let entry, var call = call(of: entry) {
            call.endedAt = Date()
            call.turnCount = activity?.turns ?? 0
            call.errorCount = activity?.errors ?? 0
            await save(call)
        }
        await release()
    }

    /// The call the console lists for a session that speaks in a conversation.
    private func call(of entry: LiveSessions.Entry) -> CallRecord? {
        guard let conversationID = entry.conversationID else { return nil }
        return CallRecord(
            id: entry.sessionID, conversationID: conversationID, userID: entry.owner?.user, door: door,
            nodeID: context.coordinator.nodeID, startedAt: entry.startedAt
        )
    }

    /// Stores a call; a failure costs the console one row, never the session.
    private func save(_ call: CallRecord) async {
        do {
            try await context.store.saveCall(call)
        } catch {
            context.log.log("store.failed", session: call.id, ["call": .string(call.id)])
        }
    }

    /// Gives the reservation back: in a cluster, the instance claim and the cluster-wide registration.
    func release() async { await reservation.release() }
}

extension LiveSessions.Refusal {
    /// The refusal a cluster admission stands for; `nil` when it admitted the session.
    init?(_ admission: ClusterAdmission) {
        switch admission {
        case .admitted: return nil
        case .clusterFull(let maximum): self = .clusterFull(maximum: maximum)
        case .userLimit(let maximum): self = .userLimit(maximum: maximum)
        case .tokenLimit(let maximum): self = .tokenLimit(maximum: maximum)
        }
    }
}
