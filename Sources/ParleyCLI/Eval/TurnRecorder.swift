import Foundation
import ParleyCore

/// Folds the server's events during one caller turn into a `TurnObservation`, and says what
/// the caller does next. A value type: tested as a table of events, no sockets.
struct TurnRecorder: Sendable {
    /// What the caller does after an event.
    enum Step: Sendable, Hashable {
        /// Keep listening.
        case listen
        /// The caller's speech was heard: ask for the reply.
        case requestReply
        /// The reply's first audio arrived.
        case replyStarted
        /// The reply is over.
        case finished
    }

    /// What was seen so far.
    private(set) var observation = TurnObservation()
    /// When the caller's last audio or text went out.
    private var inputSent: ContinuousClock.Instant?
    /// The item the reply's audio belongs to, for truncation.
    private(set) var replyAudioItemID: String?
    private var replyAudioSamples = 0
    private var lastError: String?
    private var responseDone = false
    private var awaitingTruncation = false

    /// The event ids of the interruption's client events, so their answers are told apart.
    static let cancelEventID = "evt_eval_cancel"
    static let truncateEventID = "evt_eval_truncate"

    /// The rate of the protocol's audio.
    static let sampleRate = RealtimeSessionSettings.supportedAudioRate

    /// Starts a turn; typed turns are heard as typed.
    init(typed text: String? = nil) {
        observation.heard = text
    }

    /// The caller's input went out at `instant`.
    mutating func inputSent(at instant: ContinuousClock.Instant) {
        inputSent = instant
    }

    /// The caller interrupted the reply now (cancel, and truncate to what was heard): the turn
    /// ends once the reply is done and the truncation answered.
    mutating func interrupted() {
        observation.interruptedAtAudioMs = observation.replyAudioMs
        awaitingTruncation = true
    }

    /// The turn could not go on.
    mutating func fail(_ reason: String) {
        if observation.failure == nil { observation.failure = reason }
    }

    /// Records `event`, received at `instant`.
    mutating func record(_ event: RealtimeServerEvent, at instant: ContinuousClock.Instant) -> Step {
        switch event {
        case .inputAudioTranscriptionCompleted(_, _, let transcript, _):
            observation.heard = transcript.trimmingCharacters(in: .whitespacesAndNewlines)
            return .requestReply
        case .inputAudioTranscriptionFailed(_, _, let error):
            fail("the server could not transcribe the caller: \(error.message)")
            return .finished
        case .responseOutputTextDelta(_, let delta), .responseOutputAudioTranscriptDelta(_, let delta):
            observation.reply += delta
        case .responseOutputAudioDelta(let position, let delta):
            replyAudioSamples += Self.sampleCount(base64: delta)
            observation.replyAudioMs = replyAudioSamples * 1000 / Self.sampleRate
            guard replyAudioItemID == nil else { return .listen }
            replyAudioItemID = position.itemID
            if let inputSent { observation.replyStartedAfterMs = Self.milliseconds(instant - inputSent) }
            return .replyStarted
        case .parley(let type, let payload) where type == "parley.tool_call.started":
            observation.toolCalls.append(.init(name: payload["name"]?.stringValue ?? "", arguments: payload["arguments"]?.stringValue ?? ""))
        case .parley(let type, let payload) where type == "parley.handoff":
            if let agent = payload["to_agent"]?.stringValue { observation.handoffs.append(agent) }
        case .conversationItemTruncated:
            observation.truncated = true
            awaitingTruncation = false
            return responseDone ? .finished : .listen
        case .error(let error) where error.eventID == Self.cancelEventID:
            // The reply was already generated (its speech still playing): the truncation cuts it.
            break
        case .error(let error) where error.eventID == Self.truncateEventID:
            fail("the server refused to truncate the reply: \(error.message)")
            return .finished
        case .error(let error):
            lastError = error.message
            if error.code.hasPrefix("input_audio_buffer") || observation.heard == nil {
                fail("the server refused the caller's turn: \(error.message)")
                return .finished
            }
        case .responseDone(let response):
            observation.responseStatus = response.status.rawValue
            responseDone = true
            if response.status == .failed {
                fail("the reply failed: \(response.statusDetails?.error?.message ?? lastError ?? "no reason given")")
            }
            // A handoff may end the first agent's response before the new agent speaks: the
            // turn goes on until a reply with words, or its time limit.
            let newAgentToSpeak = !observation.handoffs.isEmpty && observation.reply.isEmpty && response.status == .completed
            return awaitingTruncation || newAgentToSpeak ? .listen : .finished
        default:
            break
        }
        return .listen
    }

    /// The pcm16 samples in base64 text, from its length (the audio itself is not needed).
    static func sampleCount(base64 text: String) -> Int {
        let padding = text.utf8.suffix(2).filter { $0 == UInt8(ascii: "=") }.count
        return (text.utf8.count / 4 * 3 - padding) / 2
    }

    /// Whole milliseconds in `duration`.
    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}
