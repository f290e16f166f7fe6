import Foundation

/// What a session keeps about speech heard over its agent: the turn it may start, held back
/// until the interruption policy's verdict, where the agent's audio was paused, and the
/// transcription judging the speech.
struct InterruptionState: Sendable {
    /// Turn-detector actions of a turn that began while the agent was busy.
    private var heldTurn: [TurnDetector.Action] = []
    /// Input time at which the agent's audio was paused, while it is.
    var pausedAtMs: Int?
    /// The transcription of the speech being judged.
    var judgement: Task<Void, Never>?

    /// Whether a turn is being held back.
    var isHoldingTurn: Bool { !heldTurn.isEmpty }

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

    /// Hands back the held turn's actions (the speech interrupted the agent).
    mutating func releaseHeldTurn() -> [TurnDetector.Action] {
        defer { heldTurn = [] }
        return heldTurn
    }

    /// Forgets the held turn (the speech meant nothing).
    mutating func discardHeldTurn() { heldTurn = [] }

    private mutating func dropIfEndedUnnoticed(deciding: Bool) {
        guard !deciding, heldTurn.contains(where: { if case .commit = $0 { true } else { false } }) else { return }
        heldTurn = []
    }
}
