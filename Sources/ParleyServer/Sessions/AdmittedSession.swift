import Foundation
import ParleyCore
import ParleyNet

extension ServerContext {
    /// Runs `serve` with `session` registered among the live sessions and counted in the
    /// metrics, and removes it afterwards; when the server is at its session limit, runs
    /// `onRefusal` and closes `socket` with 1013 instead. The server ends the session early by
    /// closing `socket` with 1001 and `disconnectReason`. `serve` receives the session's id.
    func serveAdmitted(
        _ session: VoiceSession, instanceID: String?, conversationID: String?, claimEpoch: Int64? = nil,
        socket: WebSocketConnection, disconnectReason: String, onRefusal: () -> Void = {},
        _ serve: (_ sessionID: String) async -> Void
    ) async {
        let entry = LiveSessions.Entry(
            sessionID: RealtimeID.session(), instanceID: instanceID, session: session,
            disconnect: { socket.close(code: WebSocketCloseCode.goingAway, reason: disconnectReason) },
            conversationID: conversationID, claimEpoch: claimEpoch
        )
        guard sessions.admit(entry) else {
            onRefusal()
            socket.close(code: 1013, reason: "too many sessions")
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
