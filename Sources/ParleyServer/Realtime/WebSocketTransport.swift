import ParleyCore
import ParleyNet

/// The realtime WebSocket: every event a text message, the speech as base64 audio events.
struct WebSocketTransport: RealtimeTransport {
    let socket: WebSocketConnection

    var sendsAudioEvents: Bool { true }

    func receive(isolation: isolated any Actor, _ handle: (RealtimeTransportInput) async -> Void) async {
        for await message in socket.messages {
            await handle(.message(message))
        }
    }

    func send(_ text: String) throws {
        try socket.send(.text(text))
    }

    func close(reason: String) {
        socket.close(code: WebSocketCloseCode.normal, reason: reason)
    }

    func observe(_ event: VoiceSessionEvent, interruptsOnSpeech: Bool) -> [RealtimeTransportAction] { [] }

    /// Nothing to stop: the client plays the audio it was sent, and stops it itself.
    func clearOutput() -> [RealtimeTransportAction] { [] }
}
