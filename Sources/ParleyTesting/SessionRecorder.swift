import Foundation
import ParleyCore

/// Records a voice session's events so a test can await the one it expects, with a deadline.
///
/// ```swift
/// let recorder = SessionRecorder()
/// recorder.record(session)
/// #expect(await recorder.waitFor { if case .responseDone = $0 { true } else { false } })
/// ```
public actor SessionRecorder {
    private struct Waiter {
        var predicate: @Sendable ([VoiceSessionEvent]) -> Bool
        var continuation: CheckedContinuation<Bool, Never>
    }

    /// Every event recorded so far, in order.
    public private(set) var events: [VoiceSessionEvent] = []
    private var waiters: [Int: Waiter] = [:]
    private var nextWaiter = 0
    private var finished = false

    /// Creates a recorder that records nothing yet.
    public init() {}

    /// Starts recording `session`'s events.
    public nonisolated func record(_ session: VoiceSession) {
        Task { await self.consume(session.events) }
    }

    private func consume(_ stream: AsyncStream<VoiceSessionEvent>) async {
        for await event in stream {
            events.append(event)
            resumeSatisfied()
        }
        finished = true
        resumeSatisfied()
    }

    private func resumeSatisfied() {
        for (id, waiter) in waiters where waiter.predicate(events) || finished {
            waiters.removeValue(forKey: id)
            waiter.continuation.resume(returning: waiter.predicate(events))
        }
    }

    /// Waits until the recorded events satisfy `predicate`, at most `seconds`.
    /// - Returns: whether they did.
    public func wait(seconds: Double = 30, until predicate: @escaping @Sendable ([VoiceSessionEvent]) -> Bool) async -> Bool {
        if predicate(events) { return true }
        nextWaiter += 1
        let id = nextWaiter
        return await withCheckedContinuation { continuation in
            waiters[id] = Waiter(predicate: predicate, continuation: continuation)
            Task {
                try? await Task.sleep(for: TestDeadline.seconds(seconds))
                self.expire(id)
            }
        }
    }

    private func expire(_ id: Int) {
        waiters.removeValue(forKey: id)?.continuation.resume(returning: false)
    }

    /// Waits for `count` events matching `match`.
    public func waitFor(_ match: @escaping @Sendable (VoiceSessionEvent) -> Bool, count: Int = 1, seconds: Double = 30) async -> Bool {
        await wait(seconds: seconds) { $0.filter(match).count >= count }
    }

    /// How many recorded events match.
    public func count(_ match: (VoiceSessionEvent) -> Bool) -> Int { events.filter(match).count }
}

