import ParleyCore

/// A door's side of a realtime connection: how the client's events and audio arrive, and how
/// the session's events and speech reach the client. `RealtimeConnection` speaks the protocol
/// over any transport; a new door implements this, and the connection stays as it is.
protocol RealtimeTransport: Sendable {
    /// Whether the session's speech goes to the client as `response.output_audio.delta` events;
    /// `false` when the transport carries it itself (it sees each `agentAudio` in `observe`).
    var sendsAudioEvents: Bool { get }

    /// Hands what the client sends to `handle`, one input at a time and in order, on
    /// `isolation` (the connection's executor), until the client leaves.
    func receive(isolation: isolated any Actor, _ handle: (RealtimeTransportInput) async -> Void) async

    /// The longest speech one `response.output_audio.delta` may carry, in milliseconds; `nil`
    /// for no limit (longer speech goes out in pieces).
    var audioEventMaximumMs: Int? { get }

    /// Sends one JSON event (with the speech it carries, and whether it goes in order with
    /// the speech, for a transport that paces it).
    /// - Throws: when the client is gone or has stopped reading.
    func send(_ message: OutputPacing.Message) throws

    /// Drops speech the client has not been sent yet (it cancelled the response or cut its
    /// item); a transport that sends speech as it comes has none.
    func dropUndeliveredSpeech()

    /// Ends the connection from the server's side, saying `reason`.
    func close(reason: String)

    /// Takes in a session event, after its protocol events were sent; `interruptsOnSpeech` says
    /// whether the user's speech cuts the agent off. Returns what the connection does next.
    func observe(_ event: VoiceSessionEvent, interruptsOnSpeech: Bool) -> [RealtimeTransportAction]

    /// Stops the outgoing speech at once (`output_audio_buffer.clear`); returns what the
    /// connection does next.
    func clearOutput() -> [RealtimeTransportAction]
}
