import Foundation

/// What a session does about speech heard over its agent, as the interruption policy decides
/// it: holds back the turn the speech begins until the verdict, pauses the agent's audio while
/// the speech may be an interruption, and turns each of the policy's decisions into actions.
///
/// A value type: it takes the policy's decisions and the turn detector's actions and returns
/// what to do; the session carries that out.
///
/// ```swift
/// var judge = InterruptionJudge()
/// for action in judge.respond(to: policy.process(probability: p, voiced: v, agent: .speaking, at: nowMs), atMs: nowMs) {
///     switch action {
///     case .pauseOutput(let atMs): pauseAudio(atMs)
///     case .stopAgent(let atMs): cancelResponse(heardUpTo: atMs)
///     default: break
///     }
/// }
/// ```
struct InterruptionJudge: Sendable {
    /// What the session does next, in order.
    enum Action: Sendable, Hashable {
        /// Pause the agent's audio at input time `atMs` (announce it to the client).
        case pauseOutput(atMs: Int)
        /// Transcribe the speech from `speechStartMs` to `speechEndMs` and hand its words to
        /// the policy (`InterruptionPolicy.judged`); its decision comes back through `respond`.
        case transcribe(speechStartMs: Int, speechEndMs: Int)
        /// Announce the verdict on the speech from `speechStartMs`, decided at input time `atMs`.
        case announce(speechStartMs: Int, atMs: Int, interrupts: Bool, reason: InterruptionPolicy.Reason, words: String?)
        /// Let the paused audio play on from input time `atMs`.
        case resumeOutput(atMs: Int)
        /// The speech is the user's turn: carry out the turn-detector actions held back since
        /// it began (possibly none), before the agent stops, so the response ends as cut off by it.
        case startTurn([TurnDetector.Action])
        /// Stop the agent where the listener stopped hearing it: at input time `atMs`.
        case stopAgent(atMs: Int)
        /// The speech meant nothing: forget the turn it began.
        case forgetTurn
    }

    /// Turn-detector actions of a turn that began while the agent was busy.
    private var heldTurn: [TurnDetector.Action] = []
    /// Input time at which the agent's audio was paused, while it is.
    private(set) var pausedAtMs: Int?

    /// Whether a turn is being held back.
    var isHoldingTurn: Bool { !heldTurn.isEmpty }

    /// Turns the policy's `decision`, made at input time `nowMs`, into what the session does.
    /// - Parameter words: the words the decision was made on, when it was made on words.
    mutating func respond(to decision: InterruptionPolicy.Action, atMs nowMs: Int, words: String? = nil) -> [Action] {
        switch decision {
        case .none:
            return []
        case .pause:
            pausedAtMs = nowMs
            return [.pauseOutput(atMs: nowMs)]
        case .judge(let startMs, let endMs):
            return [.transcribe(speechStartMs: startMs, speechEndMs: endMs)]
        case .interrupt(let startMs, let reason):
            let stoppedAtMs = pausedAtMs ?? nowMs
            pausedAtMs = nil
            return [
                .announce(speechStartMs: startMs, atMs: nowMs, interrupts: true, reason: reason, words: words),
                .startTurn(releaseHeldTurn()),
                .stopAgent(atMs: stoppedAtMs),
            ]
        case .resume(let startMs, let reason):
            var actions: [Action] = [.announce(speechStartMs: startMs, atMs: nowMs, interrupts: false, reason: reason, words: words)]
            if pausedAtMs != nil { actions.append(.resumeOutput(atMs: nowMs)) }
            pausedAtMs = nil
            discardHeldTurn()
            actions.append(.forgetTurn)
            return actions
        }
    }

    /// Takes the turn detector's newest actions and returns those to carry out now. A turn that
    /// begins while `holding` (the agent is busy, or speech over it is being decided) is held
    /// back from its start, and goes out once nothing holds it any more; one that ends while
    /// the policy decides nothing (it never heard speech there: echo, a click) is dropped.
    mutating func admit(_ actions: [TurnDetector.Action], holding: Bool, deciding: Bool) -> [TurnDetector.Action] {
        if heldTurn.isEmpty {
            guard holding, let start = actions.firstIndex(where: { if case .speechStarted = $0 { true } else { false } }) else {
                return actions
            }
            heldTurn = Array(actions[start...])
            dropIfEndedUnnoticed(deciding: deciding)
            return Array(actions[..<start])
        }
        guard holding else { return releaseHeldTurn() + actions }
        heldTurn += actions
        dropIfEndedUnnoticed(deciding: deciding)
        return []
    }

    /// Forgets the held turn (the input was cleared).
    mutating func discardHeldTurn() { heldTurn = [] }

    /// Hands back the held turn's actions.
    private mutating func releaseHeldTurn() -> [TurnDetector.Action] {
        defer { heldTurn = [] }
        return heldTurn
    }

    private mutating func dropIfEndedUnnoticed(deciding: Bool) {
        guard !deciding, heldTurn.contains(where: { if case .commit = $0 { true } else { false } }) else { return }
        heldTurn = []
    }
}
