import Foundation
import ParleyCore
import ParleyStore

/// Turns a session's events into the figures of each answered turn, stored with the
/// conversation for the operator console's waterfall and percentiles: when the turn ended,
/// the silence window and the turn detector's wait before that, and the session's own
/// `TurnMetrics` (transcript, first token, first audio) from there; with what the caller did
/// not hear of an interrupted reply, and each judgement of speech over the agent.
///
/// The detector's wait is read off the input audio's clock: the time from the end of speech
/// to the end of the turn, less the silence window, where the end of speech is placed by the
/// audio's length since speech started (audio arrives as it is spoken).
struct TurnFiguresRecorder {
    private let conversationID: String
    private let sessionID: String
    private let now: @Sendable () -> Date

    /// The caller's speech in progress: when it was heard to start, and its audio span.
    private var speech: (heardAt: Date, audioStartMs: Int, audioEndMs: Int?)?
    /// A committed user turn waiting for its response.
    private var committed: Turn?
    /// Turns of responses in progress, by response id.
    private var turns: [String: Turn] = [:]
    /// How responses ended, until their metrics arrive (right after `responseDone`).
    private var outcomes: [String: String] = [:]
    /// The last turns whose figures were given, by response id: a client truncates a reply, and
    /// speech over the agent is judged, while the reply plays, often after the response is done.
    private var recent: [String: (figures: TurnFiguresRecord, turn: Turn)] = [:]
    private var recentOrder: [String] = []
    /// How many finished turns stay open to a late truncation or verdict.
    private static let recentTurns = 4

    private struct Turn {
        var userItemID: String?
        var endedAt: Date
        var speechEndAudioMs: Int?
        var silenceWindowMs: Double?
        var detectorWaitMs: Double?
        /// The reply's text as written, by item.
        var written: [String: String] = [:]
        var unheard: [String] = []
        var verdicts: [InterruptionVerdict] = []
    }
    /// The response whose reply is being written or spoken, which speech over the agent is judged against.
    private var speakingResponseID: String?

    init(conversationID: String, sessionID: String, now: @escaping @Sendable () -> Date = Date.init) {
        self.conversationID = conversationID
        self.sessionID = sessionID
        self.now = now
    }

    /// Takes one session event; returns a turn's figures once they are complete.
    /// - Parameter silenceWindowMs: the silence that ends a turn now (`server_vad`'s window;
    ///   `nil` when a semantic judge or the client ends turns).
    mutating func observe(_ event: VoiceSessionEvent, silenceWindowMs: Double?) -> TurnFiguresRecord? {
        let time = now()
        switch event {
        case .speechStarted(_, let audioStartMs):
            speech = (time, audioStartMs, nil)
        case .speechStopped(_, let audioEndMs):
            speech?.audioEndMs = audioEndMs
        case .inputCommitted(let itemID, _):
            var turn = Turn(userItemID: itemID, endedAt: time, speechEndAudioMs: speech?.audioEndMs)
            if let speech, let audioEndMs = speech.audioEndMs {
                let speechEnd = speech.heardAt.addingTimeInterval(Double(audioEndMs - speech.audioStartMs) / 1_000)
                let wait = time.timeIntervalSince(speechEnd) * 1_000
                turn.silenceWindowMs = silenceWindowMs
                turn.detectorWaitMs = max(0, wait - (silenceWindowMs ?? 0))
            }
            speech = nil
            committed = turn
        case .responseStarted(let responseID, let request):
            // An out-of-band response answers no turn of the conversation.
            guard !request.isOutOfBand else { break }
            turns[responseID] = committed.take() ?? Turn(endedAt: time)
            speakingResponseID = responseID
        case .agentTextDelta(let responseID, let itemID, let delta):
            turns[responseID]?.written[itemID, default: ""] += delta
        case .itemTruncated(let itemID, _, let heardText):
            let owner = turns.first { $0.value.written[itemID] != nil }?.key
                ?? recent.first { $0.value.turn.written[itemID] != nil }?.key
            guard let owner else { break }
            return amend(owner) { turn in
                let written = turn.written[itemID] ?? ""
                let unheard = written.hasPrefix(heardText) ? String(written.dropFirst(heardText.count)) : written
                if !unheard.trimmingCharacters(in: .whitespaces).isEmpty { turn.unheard.append(unheard) }
            }
        case .interruptionDecided(let speechStartMs, _, let interrupts, let reason, let words):
            guard let responseID = speakingResponseID else { break }
            let verdict = InterruptionVerdict(interrupts: interrupts, reason: reason.rawValue, words: words, speechStartMs: speechStartMs)
            return amend(responseID) { $0.verdicts.append(verdict) }
        case .responseDone(let responseID, let status, _, _):
            outcomes[responseID] = status.rawValue
        case .turnMetrics(let metrics):
            guard let turn = turns.removeValue(forKey: metrics.responseID) else { break }
            var figures = TurnFiguresRecord(
                responseID: metrics.responseID, conversationID: conversationID, sessionID: sessionID,
                userItemID: turn.userItemID, turnEndedAt: turn.endedAt, speechEndAudioMs: turn.speechEndAudioMs, silenceWindowMs: turn.silenceWindowMs,
                detectorWaitMs: turn.detectorWaitMs, transcriptionMs: metrics.transcriptionMs, firstTokenMs: metrics.firstTokenMs,
                firstAudioMs: metrics.firstAudioMs, status: outcomes.removeValue(forKey: metrics.responseID) ?? "completed"
            )
            Self.fill(&figures, from: turn)
            recent[metrics.responseID] = (figures, turn)
            recentOrder.append(metrics.responseID)
            if recentOrder.count > Self.recentTurns { recent[recentOrder.removeFirst()] = nil }
            return figures
        default:
            break
        }
        return nil
    }

    /// Changes the turn of `responseID`; returns its figures again when they were already given.
    private mutating func amend(_ responseID: String, _ change: (inout Turn) -> Void) -> TurnFiguresRecord? {
        if turns[responseID] != nil {
            change(&turns[responseID]!)
            return nil
        }
        guard var finished = recent[responseID] else { return nil }
        change(&finished.turn)
        Self.fill(&finished.figures, from: finished.turn)
        recent[responseID] = finished
        return finished.figures
    }

    private static func fill(_ figures: inout TurnFiguresRecord, from turn: Turn) {
        figures.unheardText = turn.unheard.isEmpty ? nil : turn.unheard.joined(separator: " ")
        figures.verdicts = turn.verdicts
    }
}
