import ParleySync

/// A phone call's agent asked to hang up (`end_call`): the door ends the call once the agent's
/// last words have been heard.
final class PendingHangUp: Sendable {
    private let requested = Locked(false)

    /// Asks for the call to end after the speech under way.
    func request() { requested.withLock { $0 = true } }

    /// Whether the agent asked to hang up.
    var isRequested: Bool { requested.withLock { $0 } }
}
