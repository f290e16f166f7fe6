/// Paces what goes to a WebSocket client so that its speech arrives in real time plus a small
/// lead, instead of as fast as it is made.
///
/// A client that plays what it is sent (openai-agents, Pipecat, LiveKit) and stops only at
/// `input_audio_buffer.speech_started` otherwise holds seconds of the agent's speech when the
/// user talks over it, and goes on playing them after the server has stopped. Paced, the
/// client holds at most `leadMs`, so the server's hold (while it weighs speech over the agent)
/// and its cancellation stop what the listener hears.
///
/// A value type: messages go in with the milliseconds of speech they carry and the current
/// time; it returns the messages to send now and says when to ask again. The events of a
/// response wait behind its held speech, so their order is kept; the rest (answers to the
/// client's requests, errors, what the user's audio did) go at once.
struct OutputPacing {
    /// A message to send.
    struct Message: Equatable {
        var text: String
        /// The speech it carries, in milliseconds (0 for an event without audio).
        var audioMs: Double
        /// Whether it goes in order with the speech (the events of a response); otherwise it
        /// goes at once, ahead of speech still held.
        var followsSpeech: Bool = true
    }

    /// What to send now, and when to ask again (`nil` when nothing waits on time).
    struct Release: Equatable {
        var messages: [String] = []
        var wakeAtMs: Double?
    }

    /// How much speech the client may hold beyond what it has played.
    let leadMs: Double
    private var waiting: [Message] = []
    /// When the client will have played everything it was sent (in the caller's clock).
    private var playedOutAtMs: Double = 0
    /// Held while the session weighs speech over the agent.
    private(set) var isPaused = false

    /// Paces with a lead of `leadMs` (more than 0).
    init(leadMs: Double) {
        precondition(leadMs > 0, "a lead of 0 would never send speech")
        self.leadMs = leadMs
    }

    /// Whether messages wait to go out.
    var hasWaitingMessages: Bool { !waiting.isEmpty }

    /// Takes a message at time `nowMs`.
    mutating func enqueue(_ message: Message, nowMs: Double) -> Release {
        guard message.followsSpeech || message.audioMs > 0 else {
            var due = release(nowMs: nowMs)
            due.messages.append(message.text)
            return due
        }
        waiting.append(message)
        return release(nowMs: nowMs)
    }

    /// The messages due at `nowMs`: every event up to the next piece of speech the client
    /// cannot take yet (or any speech, while paused).
    mutating func release(nowMs: Double) -> Release {
        var due = Release()
        while let next = waiting.first {
            if next.audioMs > 0 {
                if isPaused { break }
                let heldAtClient = max(0, playedOutAtMs - nowMs)
                // The first piece after a gap always goes, whatever its length.
                if heldAtClient > 0, heldAtClient + next.audioMs > leadMs {
                    due.wakeAtMs = playedOutAtMs - (leadMs - next.audioMs)
                    break
                }
                playedOutAtMs = max(playedOutAtMs, nowMs) + next.audioMs
            }
            due.messages.append(next.text)
            waiting.removeFirst()
        }
        return due
    }

    /// Holds the speech still waiting (events before it still go out).
    mutating func pause() {
        isPaused = true
    }

    /// Lets the held speech go on at `nowMs`.
    mutating func resume(nowMs: Double) -> Release {
        isPaused = false
        return release(nowMs: nowMs)
    }

    /// Drops the speech still waiting (a cancelled, cut or interrupted response: the client
    /// never hears it) and releases the events that waited behind it. The client's own buffer
    /// is left as it is: what it holds was already sent.
    mutating func dropSpeech(nowMs: Double) -> Release {
        waiting.removeAll { $0.audioMs > 0 }
        isPaused = false
        return release(nowMs: nowMs)
    }
}
