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
    /// The responses in which the agent called a handoff's transfer tool.
    private var transferringResponses: Set<String> = []
    /// Whether a transferring response has ended, so a refused handoff ends the turn.
    private var transferringResponseDone = false
    /// Whether the server refused a handoff since the last transfer call.
    private var handoffRefused = false
    /// The caller is to speak over the reply and has not yet.
    private var speechOverPending = false
    /// The caller spoke over the reply and the server has not judged it yet.
    private var awaitingVerdict = false
    /// When the reply's first audio arrived.
    private var replyStarted: ContinuousClock.Instant?
    /// How many responses still to start answer key presses before the turn's last: each press
    /// cuts the reply to the one before, and only the last one's reply is the turn's.
    private var repliesToPassOver: Int
    /// The responses to earlier key presses, whose events are passed over.
    private var passedOverResponses: Set<String> = []

    /// The prefix of the tools a handoff offers the model (`transfer_to_<agent id>`).
    static let transferToolPrefix = "transfer_to_"

    /// The event ids of the interruption's client events, so their answers are told apart.
    static let cancelEventID = "evt_eval_cancel"
    static let truncateEventID = "evt_eval_truncate"
    /// The event id of the caller's key presses, so the server's refusal of one ends the turn.
    static let keyPressEventID = "evt_eval_key_press"

    /// The rate of the protocol's audio.
    static let sampleRate = RealtimeSessionSettings.supportedAudioRate

    /// Starts a turn; typed turns are heard as typed. The replies to the first
    /// `repliesToPassOver` responses (the earlier keys of a turn that presses several) are not
    /// the turn's.
    init(typed text: String? = nil, repliesToPassOver: Int = 0) {
        observation.heard = text
        self.repliesToPassOver = repliesToPassOver
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

    /// The caller will speak over the reply (server turn detection): the turn ends only once it
    /// has, and the server has judged the speech.
    mutating func willSpeakOver() {
        speechOverPending = true
    }

    /// The caller spoke over the reply now.
    mutating func spokeOver() {
        observation.interruptedAtAudioMs = observation.replyAudioMs
        observation.spokeOverReply = true
        speechOverPending = false
        awaitingVerdict = true
    }

    /// Whether the reply had played to its end by `instant` (its audio arrives paced, as it plays).
    func replyPlayedOut(by instant: ContinuousClock.Instant) -> Bool {
        guard responseDone, let replyStarted else { return responseDone }
        return instant - replyStarted >= .milliseconds(observation.replyAudioMs)
    }

    /// The reply ended before the caller could speak over it.
    mutating func speechOverMissed() -> Step {
        speechOverPending = false
        return settled
    }

    /// `.finished` once the reply is done and nothing more is awaited.
    private var settled: Step {
        responseDone && !awaitingTruncation && !speechOverPending && !awaitingVerdict ? .finished : .listen
    }

    /// The turn could not go on.
    mutating func fail(_ reason: String) {
        if observation.failure == nil { observation.failure = reason }
    }

    /// Records `event`, received at `instant`.
    mutating func record(_ event: RealtimeServerEvent, at instant: ContinuousClock.Instant) -> Step {
        if case .responseCreated(let response) = event, repliesToPassOver > 0 {
            repliesToPassOver -= 1
            passedOverResponses.insert(response.id)
        }
        if let responseID = Self.responseID(of: event), passedOverResponses.contains(responseID) { return .listen }
        switch event {
        case .inputAudioTranscriptionCompleted(_, _, let transcript, _) where observation.spokeOverReply:
            // The speech over the reply became a turn of its own: the next caller turn's.
            observation.heardOverReply = transcript.trimmingCharacters(in: .whitespacesAndNewlines)
            awaitingVerdict = false
            return settled
        case .parley(let type, let payload) where type == "parley.interruption" && observation.spokeOverReply:
            observation.interruptionVerdict = .init(
                interrupts: payload["interrupts"]?.boolValue ?? false, reason: payload["reason"]?.stringValue ?? "", words: payload["words"]?.stringValue
            )
            awaitingVerdict = false
            return settled
        case .inputAudioTranscriptionCompleted(_, _, let transcript, _):
            // Under server turn detection a pause may split the caller's words into pieces.
            let words = transcript.trimmingCharacters(in: .whitespacesAndNewlines)
            if let heard = observation.heard, !heard.isEmpty {
                if !words.isEmpty { observation.heard = heard + " " + words }
            } else {
                observation.heard = words
            }
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
            replyStarted = instant
            if let inputSent { observation.replyStartedAfterMs = Self.milliseconds(instant - inputSent) }
            return .replyStarted
        case .parley(let type, let payload) where type == "parley.tool_call.started":
            let name = payload["name"]?.stringValue ?? ""
            // A handoff's transfer is reported as the handoff it makes, not as a tool call.
            if name.hasPrefix(Self.transferToolPrefix) {
                transferringResponses.insert(payload["response_id"]?.stringValue ?? "")
                handoffRefused = false
            } else {
                observation.toolCalls.append(.init(name: name, arguments: payload["arguments"]?.stringValue ?? ""))
            }
        case .parley(let type, let payload) where type == "parley.handoff":
            return handoff(payload)
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
        case .error(let error) where error.eventID == Self.keyPressEventID:
            fail("the server refused the key press: \(error.message)")
            return .finished
        case .error(let error):
            lastError = error.message
            if error.code.hasPrefix("input_audio_buffer") || observation.heard == nil {
                fail("the server refused the caller's turn: \(error.message)")
                return .finished
            }
        case .responseDone(let response) where Self.cutByTheCallerGoingOn(response) && !observation.spokeOverReply:
            // Under server turn detection a pause ended the caller's turn early and the server
            // started a reply, which the rest of the caller's words cut: the reply is still to come.
            observation.reply = ""
            observation.replyAudioMs = 0
            observation.replyStartedAfterMs = nil
            replyAudioSamples = 0
            replyAudioItemID = nil
            replyStarted = nil
        case .responseDone(let response):
            observation.responseStatus = response.status.rawValue
            responseDone = true
            if response.status == .failed {
                fail("the reply failed: \(response.statusDetails?.error?.message ?? lastError ?? "no reason given")")
            }
            // A transfer ends the first agent's response and the new agent answers in a
            // response of its own, in the same turn (the server reports the handoff around the
            // first one's end); a refused handoff leaves the first agent's answer the last.
            let transferred = transferringResponses.contains(response.id) || transferringResponses.contains("")
                || response.output.contains(where: Self.isTransfer)
            transferringResponses.removeAll()
            transferringResponseDone = transferred
            let newAgentToAnswer = transferred && !handoffRefused && response.status == .completed
            return newAgentToAnswer ? .listen : settled
        default:
            break
        }
        return .listen
    }

    /// Records a `parley.handoff` report: a handoff made (the new agent's response follows) or
    /// refused (the agent already answered itself).
    private mutating func handoff(_ payload: JSONValue) -> Step {
        let agent = payload["to_agent"]?.stringValue ?? ""
        if let error = payload["error"]?.stringValue {
            observation.refusedHandoffs.append("\(agent): \(error)")
            handoffRefused = true
            return transferringResponseDone && !awaitingTruncation ? .finished : .listen
        }
        observation.handoffs.append(agent)
        if let last = observation.reply.last, !last.isWhitespace { observation.reply += " " }
        return .listen
    }

    /// The response the recorded `event` belongs to, for the events that say.
    private static func responseID(of event: RealtimeServerEvent) -> String? {
        switch event {
        case .responseCreated(let response), .responseDone(let response): response.id
        case .responseOutputAudioDelta(let position, _), .responseOutputTextDelta(let position, _),
             .responseOutputAudioTranscriptDelta(let position, _):
            position.responseID
        case .parley(_, let payload): payload["response_id"]?.stringValue
        default: nil
        }
    }

    /// Whether `response` was cancelled because the caller spoke (server turn detection).
    private static func cutByTheCallerGoingOn(_ response: RealtimeResponse) -> Bool {
        response.status == .cancelled && response.statusDetails?.reason == .turnDetected
    }

    /// Whether `item` is a call of a handoff's transfer tool.
    private static func isTransfer(_ item: RealtimeItem) -> Bool {
        if case .functionCall(_, let name, _) = item.kind { return name.hasPrefix(transferToolPrefix) }
        return false
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
