import Foundation
import ParleyCore

/// Every server event one realtime session received, in order, with a way to await one.
///
/// `@unchecked Sendable`: `events` and `waiters` are guarded by `lock`.
final class RealtimeEventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [JSONValue] = []
    private var receivedAt: [ContinuousClock.Instant] = []
    private var waiters: [(id: Int, matches: @Sendable (JSONValue) -> Bool, continuation: CheckedContinuation<JSONValue?, Never>)] = []
    private var nextWaiter = 0
    private var closed = false

    /// Records a server event (JSON text); text that is not JSON is ignored.
    func record(_ text: String) {
        let now = ContinuousClock.now
        guard let event = try? JSONValue(parsing: text) else { return }
        let ready = lock.withLock { () -> [(CheckedContinuation<JSONValue?, Never>)] in
            events.append(event)
            receivedAt.append(now)
            let matched = waiters.filter { $0.matches(event) }
            waiters.removeAll { waiter in matched.contains { $0.id == waiter.id } }
            return matched.map(\.continuation)
        }
        for continuation in ready { continuation.resume(returning: event) }
    }

    /// The connection closed: every waiter gets `nil`.
    func close() {
        let waiting = lock.withLock { () -> [CheckedContinuation<JSONValue?, Never>] in
            closed = true
            defer { waiters.removeAll() }
            return waiters.map(\.continuation)
        }
        for continuation in waiting { continuation.resume(returning: nil) }
    }

    /// Events so far of `type`.
    func all(_ type: String) -> [JSONValue] {
        lock.withLock { events.filter { $0["type"]?.stringValue == type } }
    }

    /// When the first event of `type` arrived, if it did.
    func firstArrival(_ type: String) -> ContinuousClock.Instant? {
        lock.withLock { events.firstIndex { $0["type"]?.stringValue == type }.map { receivedAt[$0] } }
    }

    /// The first event so far of `type`.
    func first(_ type: String) -> JSONValue? { all(type).first }

    /// The first event (already received or yet to come) for which `matches` holds, or `nil`
    /// when none came within `timeout` or the connection closed.
    func wait(for timeout: Duration, _ matches: @escaping @Sendable (JSONValue) -> Bool) async -> JSONValue? {
        let id = lock.withLock { () -> Int in
            nextWaiter += 1
            return nextWaiter
        }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            self?.expire(id)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let found = lock.withLock { () -> JSONValue?? in
                if let event = events.first(where: matches) { return .some(event) }
                if closed { return .some(nil) }
                waiters.append((id, matches, continuation))
                return nil
            }
            if let found { continuation.resume(returning: found) }
        }
    }

    /// The first event of `type`, waiting up to `timeout`.
    func wait(for timeout: Duration, type: String) async -> JSONValue? {
        await wait(for: timeout) { $0["type"]?.stringValue == type }
    }

    private func expire(_ id: Int) {
        let continuation = lock.withLock { () -> CheckedContinuation<JSONValue?, Never>? in
            guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return waiters.remove(at: index).continuation
        }
        continuation?.resume(returning: nil)
    }
}
