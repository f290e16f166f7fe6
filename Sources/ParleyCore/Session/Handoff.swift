import ParleySync

/// Hands one value to the one waiting for it: the first given wins and later ones are
/// dropped; a value given before anyone waits is kept for the waiter.
///
/// ```swift
/// let answer = Handoff<Int>()
/// Task { answer.give(42) }
/// let value = await withCheckedContinuation { _ = answer.wait(with: $0) }  // 42
/// ```
final class Handoff<Value: Sendable>: Sendable {
    private enum State {
        case empty
        case awaited(CheckedContinuation<Value?, Never>)
        case given(Value?)
        case handedOver
    }

    private let state = Locked(State.empty)

    /// Whether someone waits and nothing has been given yet.
    var isAwaited: Bool {
        state.withLock { if case .awaited = $0 { true } else { false } }
    }

    /// Waits with `continuation`, which is resumed at once when a value was already given.
    /// - Returns: whether the waiter still waits (nothing was given yet).
    @discardableResult
    func wait(with continuation: CheckedContinuation<Value?, Never>) -> Bool {
        let given = state.withLock { state -> Value?? in
            guard case .given(let value) = state else {
                state = .awaited(continuation)
                return nil
            }
            state = .handedOver
            return .some(value)
        }
        guard let given else { return true }
        continuation.resume(returning: given)
        return false
    }

    /// Gives the value (`nil`: none is coming); dropped when one was given before.
    func give(_ value: Value?) {
        let waiter = state.withLock { state -> CheckedContinuation<Value?, Never>? in
            switch state {
            case .empty:
                state = .given(value)
                return nil
            case .awaited(let continuation):
                state = .handedOver
                return continuation
            case .given, .handedOver:
                return nil
            }
        }
        waiter?.resume(returning: value)
    }
}
