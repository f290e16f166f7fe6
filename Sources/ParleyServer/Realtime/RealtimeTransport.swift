import ParleyNet
import ParleyRTC

/// Where a realtime connection's events travel: a WebSocket (audio as base64 events), or a
/// WebRTC call (events on its `oai-events` data channel, audio as Opus on its track).
enum RealtimeTransport: Sendable {
    case webSocket(WebSocketConnection)
    case call(RTCCall)

    /// Sends one JSON event.
    func send(_ text: String) throws {
        switch self {
        case .webSocket(let socket): try socket.send(.text(text))
        case .call(let call): call.send(text: text)
        }
    }

    /// Ends the connection from the server's side, saying `reason`.
    func close(reason: String) {
        switch self {
        case .webSocket(let socket): socket.close(code: WebSocketCloseCode.normal, reason: reason)
        case .call(let call): call.close()
        }
    }
}
