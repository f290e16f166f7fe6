import Foundation
import ParleyCore
import ParleyNet
import ParleyStore

/// What a realtime session does in cluster mode before it starts and after it ends: it is
/// admitted under the cluster-wide session maximum and its user's and token's limits on every node, claims its instance (the previous owner
/// is told to let go), writes its items through the claim (refused once a newer claim
/// exists), and releases both when it ends. On a single node it only runs the session.
enum ClusterSessionGate {
    /// Runs `session` with the context it should use (its store fenced by the claim) and the
    /// claim's epoch; refuses the client with an `error` event and close code 1013 when the
    /// cluster, or the caller's share of it, is full.
    static func serve(
        _ socket: WebSocketConnection, request: HTTPRequest, context: ServerContext,
        session: (ServerContext, _ claimEpoch: Int64?) async -> Void
    ) async {
        guard let cluster = context.cluster else {
            await session(context, nil)
            return
        }
        let admissionID = RealtimeID.session()
        let caller = try? context.authentication.caller(of: request)
        let instanceID = SessionSetup.requestedInstance(of: request, caller: caller)
        let owner = caller.flatMap(LiveSessions.Owner.init)
        let limits = ClusterSessionLimits(
            maximum: context.settings.clusterMaximumSessions,
            perUser: context.sessions.limits.perUser, perToken: context.sessions.limits.perToken
        )
        let claim: InstanceClaim?
        do {
            let admission = try await cluster.admitSession(
                id: admissionID, instanceID: instanceID,
                owner: owner.map { ClusterSessionOwner(user: $0.user, tokenID: $0.tokenID) }, limits: limits
            )
            if let refusal = LiveSessions.Refusal(admission) {
                context.metrics.doorRefused(door: "websocket", reason: refusal.code)
                refuse(socket, request, code: refusal.code, closeCode: 1013, message: refusal.message)
                return
            }
            claim = try await claimIfAllowed(instanceID, caller: caller, context: context, cluster: cluster)
        } catch {
            await cluster.sessionEnded(id: admissionID)
            refuse(socket, request, code: "session_setup_failed", closeCode: WebSocketCloseCode.policyViolation,
                   message: "The cluster's database could not admit the session: \(error)")
            return
        }
        var sessionContext = context
        if let claim {
            sessionContext.store = cluster.store(for: claim)
            if let previous = claim.previousOwner {
                // The old owner closes its socket; this session need not wait for it.
                Task { _ = try? await cluster.send(.release, instanceID: claim.instanceID, epoch: claim.epoch, to: previous) }
            }
        }
        await session(sessionContext, claim?.epoch)
        if let claim { await cluster.release(claim) }
        await cluster.sessionEnded(id: admissionID)
    }

    /// Claims the instance the client asks for, unless its token may not join it (the session
    /// setup then refuses it; it must not take the instance from its rightful client).
    private static func claimIfAllowed(
        _ instanceID: String?, caller: Caller?, context: ServerContext, cluster: PostgresCluster
    ) async throws -> InstanceClaim? {
        guard let instanceID else { return nil }
        if case .client(let claims)? = caller {
            guard let instance = try await context.store.instance(id: instanceID), claims.mayJoin(instance) else { return nil }
        }
        return try await cluster.claim(instanceID: instanceID)
    }

    private static func refuse(_ socket: WebSocketConnection, _ request: HTTPRequest, code: String, closeCode: UInt16, message: String) {
        let event = RealtimeServerEvent.error(RealtimeProtocolError(code: code, message: message))
        if let text = event.encode(dialect: RealtimeEndpoint.dialect(of: request)) { try? socket.send(.text(text)) }
        socket.close(code: closeCode, reason: code.replacingOccurrences(of: "_", with: " "))
    }
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
