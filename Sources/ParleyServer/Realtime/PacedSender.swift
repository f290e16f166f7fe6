import Dispatch
import ParleySync

/// Sends a client's messages through `OutputPacing`: what is due goes out at once, in order,
/// and a wake-up on `queue` sends what waits on time.
final class PacedSender: Sendable {
    private struct State {
        var pacing: OutputPacing
        /// The wake-up asked for, if any (an earlier one replaces a later one).
        var wakeAtMs: Double?
        var isClosed = false
    }

    private let state: Locked<State>
    private let write: @Sendable (String) -> Void
    private let queue: DispatchQueue

    /// Paces to `leadMs` of speech ahead; `write` sends one message (called in order, never
    /// twice at once).
    init(leadMs: Double, queue: DispatchQueue = .global(), write: @escaping @Sendable (String) -> Void) {
        state = Locked(State(pacing: OutputPacing(leadMs: leadMs)))
        self.queue = queue
        self.write = write
    }

    /// Sends `message` when it is due.
    func send(_ message: OutputPacing.Message) {
        carryOut { $0.enqueue(message, nowMs: $1) }
    }

    /// Holds the speech still to go out.
    func pause() {
        state.withLock { $0.pacing.pause() }
    }

    /// Lets the held speech go on.
    func resume() {
        carryOut { $0.resume(nowMs: $1) }
    }

    /// Drops the speech still to go out; the events behind it go now.
    func dropSpeech() {
        carryOut { $0.dropSpeech(nowMs: $1) }
    }

    /// Sends nothing more.
    func close() {
        state.withLock { $0.isClosed = true }
    }

    /// Applies `change` at the current time, writes what it released (under the lock, so
    /// messages never overtake each other) and asks for the wake-up it needs.
    private func carryOut(_ change: (inout OutputPacing, Double) -> OutputPacing.Release) {
        let wakeAtMs: Double? = state.withLock { state in
            guard !state.isClosed else { return nil }
            let release = change(&state.pacing, Self.nowMs())
            for message in release.messages { write(message) }
            guard let wanted = release.wakeAtMs, state.wakeAtMs.map({ wanted < $0 }) ?? true else { return nil }
            state.wakeAtMs = wanted
            return wanted
        }
        guard let wakeAtMs else { return }
        let delay = max(0, wakeAtMs - Self.nowMs())
        queue.asyncAfter(deadline: .now() + .microseconds(Int(delay * 1_000))) { [weak self] in
            self?.wake(scheduledAtMs: wakeAtMs)
        }
    }

    private func wake(scheduledAtMs: Double) {
        let isCurrent = state.withLock { state in
            guard state.wakeAtMs == scheduledAtMs else { return false }
            state.wakeAtMs = nil
            return true
        }
        guard isCurrent else { return }
        carryOut { $0.release(nowMs: $1) }
    }

    private static func nowMs() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1_000_000
    }
}
