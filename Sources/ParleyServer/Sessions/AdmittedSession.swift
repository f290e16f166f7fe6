import Foundation
import ParleyCore
import ParleyNet

extension ServerContext {
    /// Runs `serve` with `session` (arriving through `door`) registered among the live sessions (counted against
    /// `owner`'s limits) and in the metrics, and removes it afterwards; when a session limit is
    /// reached, runs `onRefusal` (which may tell the client) and closes `socket` with 1013
    /// instead. The server ends the session early by closing `socket` with 1001 and
    /// `disconnectReason`. `serve` receives the session's id.
    func serveAdmitted(
        _ session: VoiceSession, door: String, instanceID: String?, conversationID: String?, claimEpoch: Int64? = nil,
        owner: LiveSessions.Owner? = nil, socket: WebSocketConnection, disconnectReason: String,
        onRefusal: (LiveSessions.Refusal) -> Void = { _ in },
        _ serve: (_ sessionID: String) async -> Void
    ) async {
        let entry = LiveSessions.Entry(
            sessionID: RealtimeID.session(), instanceID: instanceID, session: session,
            disconnect: { socket.close(code: WebSocketCloseCode.goingAway, reason: disconnectReason) },
            conversationID: conversationID, claimEpoch: claimEpoch, owner: owner
        )
        if let refusal = sessions.admit(entry) {
            metrics.doorRefused(door: door, reason: refusal.code)
            onRefusal(refusal)
            socket.close(code: 1013, reason: refusal.code.replacingOccurrences(of: "_", with: " "))
            return
        }
        metrics.sessionOpened()
        defer {
            sessions.remove(sessionID: entry.sessionID)
            metrics.sessionClosed()
        }
        await serve(entry.sessionID)
    }
}
