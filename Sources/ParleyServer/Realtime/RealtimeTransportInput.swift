import ParleyCore
import ParleyNet

/// One thing a `RealtimeTransport` brings in from its client.
enum RealtimeTransportInput: Sendable {
    /// A client message: a JSON event as text (a binary one is refused).
    case message(WebSocketMessage)
    /// Audio streaming in on a media track, at `sampleRate`: appended to the input buffer. A
    /// track keeps sending when the buffer is full, so that is reported once until it empties.
    case streamedAudio([Int16], sampleRate: Int)
    /// A server event about the transport itself (a call's `output_audio_buffer.*`), sent in
    /// order with the session's.
    case event(RealtimeServerEvent)
    /// A client message the transport refused, with the reason to report.
    case refused(String)
    /// A caller pressed a key (a phone's `0`–`9`, `*`, `#`): the agent is told and answers.
    case keyPressed(String)
    /// The client hung up, saying why; the input ends.
    case ended(reason: String)
}
