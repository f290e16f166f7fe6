import ParleySync

/// Where a session's transfer tools leave the handoff they prepared, for the session to carry
/// out once the response ends, and how many handoffs the turn has had: past `limitPerTurn` a
/// transfer is refused, so two agents cannot hand the caller back and forth for ever.
public final class AgentHandoffs: Sendable {
    /// How many handoffs one turn may have when the server says nothing else.
    public static let defaultLimitPerTurn = 3

    /// The most handoffs in one turn (from one user turn or `response.create` to the next).
    public let limitPerTurn: Int

    private struct State {
        var pending: AgentSwitch?
        var refused: [AgentHandoffReport] = []
        var thisTurn = 0
    }

    private let state = Locked(State())

    /// Creates an empty desk.
    public init(limitPerTurn: Int = AgentHandoffs.defaultLimitPerTurn) {
        self.limitPerTurn = max(1, limitPerTurn)
    }

    /// Leaves `handoff` for the session.
    /// - Returns: `false`, leaving nothing, when the turn already had `limitPerTurn` handoffs.
    public func propose(_ handoff: AgentSwitch) -> Bool {
        state.withLock { state in
            guard state.thisTurn < limitPerTurn else { return false }
            state.thisTurn += 1
            state.pending = handoff
            return true
        }
    }

    /// Records a handoff that was not carried out, for the session to report.
    public func refuse(_ report: AgentHandoffReport) {
        state.withLock { $0.refused.append(report) }
    }

    /// The handoff waiting to be carried out, taken.
    func takePending() -> AgentSwitch? {
        state.withLock { state in
            defer { state.pending = nil }
            return state.pending
        }
    }

    /// The refusals not reported yet, taken.
    func takeRefusals() -> [AgentHandoffReport] {
        state.withLock { state in
            defer { state.refused = [] }
            return state.refused
        }
    }

    /// A new turn begins: it may have `limitPerTurn` handoffs again.
    func turnBegan() {
        state.withLock { $0.thisTurn = 0 }
    }
}
