import Foundation
import ParleySync

/// Counts in-flight work of one kind and lets shutdown wait, with a deadline, until none is left.
///
/// `@unchecked Sendable`: `state` is guarded by its lock.
final class ActivityTracker: @unchecked Sendable {
    private struct State {
        var count = 0
        var waiters: [UUID: CheckedContinuation<Bool, Never>] = [:]
    }

    private let state = Locked(State())

    /// The number of items in flight.
    var count: Int { state.withLock { $0.count } }

    /// One more item is in flight.
    func begin() {
        state.withLock { $0.count += 1 }
    }

    /// One item finished.
    func end() {
        let waiters = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.count -= 1
            guard state.count == 0 else { return [] }
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        waiters.forEach { $0.resume(returning: true) }
    }

    /// Waits until nothing is in flight; returns `false` when `timeout` passed first.
    func waitUntilIdle(timeout: Duration) async -> Bool {
        let id = UUID()
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let idle = state.withLock { state -> Bool in
                if state.count > 0 { state.waiters[id] = continuation }
                return state.count == 0
            }
            if idle {
                continuation.resume(returning: true)
                return
            }
            Task { [state] in
                try? await Task.sleep(for: timeout)
                let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
                waiter?.resume(returning: false)
            }
        }
    }
}
