import Foundation
import ParleyNet

/// `GET /v1/realtime?call_id=…`: a backend's WebSocket on a live WebRTC or SIP call (OpenAI's
/// sideband connection). It needs the server secret, sees the call's server events from the
/// moment it joins (starting with `session.updated`), and sends client events that act on the
/// call's session as the browser's would. It ends when the call ends.
enum RealtimeSideband {
    /// Why a sideband socket may not open: not the server secret (401/403), or no such call (404).
    static func refusal(of request: HTTPRequest, callID: String, context: ServerContext) -> HTTPResponse? {
        if let refusal = context.authentication.requireBackend(request) { return refusal }
        guard context.calls.connection(callID: callID) != nil else {
            return .error(status: 404, code: "call_not_found", message: "No live call \(callID).")
        }
        return nil
    }

    static func serve(_ socket: WebSocketConnection, callID: String, context: ServerContext) async {
        guard let connection = context.calls.connection(callID: callID) else {
            socket.close(code: WebSocketCloseCode.normal, reason: "call ended")
            return
        }
        await connection.serveSideband(socket)
    }
}
