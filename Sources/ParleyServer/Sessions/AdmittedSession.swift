import Foundation
import ParleyCore
import ParleyNet

extension SessionAdmission {
    /// Runs `serve` with `session` admitted on this node, then ends it, for a door whose client
    /// holds a WebSocket. When a limit refuses it, runs `onRefusal` (which may tell the client)
    /// and closes `socket` with 1013 instead. The server ends the session early by closing
    /// `socket` with 1001 and `disconnectReason`. `serve` receives the session's id.
    func serve(
        _ session: VoiceSession, instanceID: String?, conversationID: String?, socket: WebSocketConnection, disconnectReason: String,
        onRefusal: (Refusal) -> Void = { _ in },
        _ serve: (_ sessionID: String) async -> Void
    ) async {
        let sessionID: String
        do {
            sessionID = try await admit(session, instanceID: instanceID, conversationID: conversationID) {
                socket.close(code: WebSocketCloseCode.goingAway, reason: disconnectReason)
            }
        } catch {
            onRefusal(error)
            socket.close(code: 1013, reason: error.code.replacingOccurrences(of: "_", with: " "))
            return
        }
        await serve(sessionID)
        await end(sessionID: sessionID)
    }
}
