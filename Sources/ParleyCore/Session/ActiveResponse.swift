import Foundation

/// The state a session keeps about the response in progress.
struct ActiveResponse: Sendable {
    var id: String
    /// The assistant message item the response speaks into.
    var itemID: String
    /// When the turn ended (end of speech, or the request for a text turn).
    var trigger: Duration
    var metrics: TurnMetrics
    /// Which audio speaks which text.
    var tracker: SpokenTextTracker
    /// When the listener is hearing the reply.
    var playback: PlaybackEstimate
    /// The text written so far.
    var text = ""
    /// Whether the message item was announced to the client.
    var messageItemOpened = false
    /// Whether the response ended by handing tool calls to the client.
    var clientToolsRequested = false
    /// Whether it speaks (audio and transcript) or only writes.
    var speaks: Bool
    /// Whether it stays out of the conversation (`conversation: "none"`).
    var isOutOfBand: Bool
    /// How much of its audio the client said was heard (`conversation.item.truncate`), if it did.
    var heardLimitMs: Int?
    /// The task running the response; cancelled when the response ends.
    var task: Task<Void, Never>?
}

/// Estimates when the listener hears the agent's audio, in input-audio time: a client plays
/// audio as it arrives and sends its microphone audio in real time, so the input stream is
/// the session's clock.
struct PlaybackEstimate: Sendable {
    let sampleRate: Int
    /// Input time at which the first chunk started playing.
    private(set) var startInputMs: Int?
    /// Input time at which the audio sent so far ends playing.
    private(set) var endInputMs = 0
    /// Milliseconds of audio sent.
    private(set) var sentMilliseconds = 0

    init(sampleRate: Int) { self.sampleRate = sampleRate }

    /// Records a chunk sent at input time `inputMs`.
    mutating func recordChunk(sampleCount: Int, atInputMs inputMs: Int) {
        let chunkMs = sampleCount * 1000 / max(sampleRate, 1)
        if startInputMs == nil { startInputMs = inputMs }
        endInputMs = max(endInputMs, inputMs) + chunkMs
        sentMilliseconds += chunkMs
    }

    /// Whether audio is still playing at input time `inputMs`.
    func isPlaying(atInputMs inputMs: Int) -> Bool {
        startInputMs != nil && inputMs < endInputMs
    }

    /// How much of the reply the listener has heard at input time `inputMs`.
    func heardMilliseconds(atInputMs inputMs: Int) -> Int {
        guard let startInputMs else { return 0 }
        return min(sentMilliseconds, max(0, inputMs - startInputMs))
    }
}
