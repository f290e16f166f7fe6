import ParleyCore
import ParleyNet

/// The realtime WebSocket: every event a text message, the speech as base64 audio events,
/// paced to real time plus a lead (`PacedSender`) so that the server's hold and cancellation
/// stop what a client that simply plays its audio hears.
final class WebSocketTransport: RealtimeTransport {
    let socket: WebSocketConnection
    /// `nil` when speech goes out as fast as it is made (a lead of 0).
    private let pacer: PacedSender?

    /// Carries a session on `socket`, its speech at most `audioLeadMs` ahead of real time
    /// (0: unpaced).
    init(socket: WebSocketConnection, audioLeadMs: Int) {
        self.socket = socket
        pacer = audioLeadMs > 0 ? PacedSender(leadMs: Double(audioLeadMs)) { text in try? socket.send(.text(text)) } : nil
    }

    var sendsAudioEvents: Bool { true }

    /// Long speech goes out in pieces of at most 100 ms, so that pacing holds it back.
    var audioEventMaximumMs: Int? { pacer == nil ? nil : 100 }

    func receive(isolation: isolated any Actor, _ handle: (RealtimeTransportInput) async -> Void) async {
        for await message in socket.messages {
            await handle(.message(message))
        }
    }

    func send(_ message: OutputPacing.Message) throws {
        guard let pacer else { return try socket.send(.text(message.text)) }
        guard socket.isOpen else { throw WebSocketError.closed }
        pacer.send(message)
    }

    func close(reason: String) {
        pacer?.close()
        socket.close(code: WebSocketCloseCode.normal, reason: reason)
    }

    /// Holds the paced speech while the session weighs speech over it, and drops what has not
    /// gone out when the response is cancelled or the user's speech interrupts it.
    func observe(_ event: VoiceSessionEvent, interruptsOnSpeech: Bool) -> [RealtimeTransportAction] {
        guard let pacer else { return [] }
        switch event {
        case .outputAudioPaused: pacer.pause()
        case .outputAudioResumed: pacer.resume()
        case .speechStarted where interruptsOnSpeech: pacer.dropSpeech()
        case .responseDone(_, .cancelled, _, _): pacer.dropSpeech()
        default: break
        }
        return []
    }

    /// Drops the paced speech not yet sent; the client stops what it holds itself.
    func clearOutput() -> [RealtimeTransportAction] {
        dropUndeliveredSpeech()
        return []
    }

    func dropUndeliveredSpeech() {
        pacer?.dropSpeech()
    }
}
