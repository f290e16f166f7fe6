import Foundation
import ParleyCore

/// What a scenario run waits on, in one ordered stream: the server's events with the moment
/// each arrived, the session's end, and deadlines the run set itself (an interruption's
/// moment, a turn's time limit).
struct SessionSignals {
    /// One thing that happened.
    enum Signal: Sendable {
        /// A server event and when it arrived.
        case event(RealtimeServerEvent, ContinuousClock.Instant)
        /// The server closed the session.
        case closed
        /// The deadline with this number passed.
        case deadline(Int)
    }

    private var signals: AsyncStream<Signal>.Iterator
    private let continuation: AsyncStream<Signal>.Continuation
    private let pump: Task<Void, Never>
    private var timers: [Task<Void, Never>] = []

    /// Starts reading `events`.
    init(_ events: RealtimeLink.Events) {
        let (stream, continuation) = AsyncStream.makeStream(of: Signal.self, bufferingPolicy: .unbounded)
        signals = stream.makeAsyncIterator()
        self.continuation = continuation
        pump = Task {
            var events = events
            while let event = await events.next() { continuation.yield(.event(event, .now)) }
            continuation.yield(.closed)
        }
    }

    /// The next signal; `.closed` once the session is over.
    mutating func next() async -> Signal {
        await signals.next() ?? .closed
    }

    /// Sets a deadline `milliseconds` from now and returns its number.
    mutating func deadline(in milliseconds: Int) -> Int {
        let number = timers.count
        let continuation = continuation
        timers.append(Task {
            do {
                try await Task.sleep(for: .milliseconds(milliseconds))
                continuation.yield(.deadline(number))
            } catch {}
        })
        return number
    }

    /// Stops reading and drops the deadlines still pending.
    func stop() {
        pump.cancel()
        timers.forEach { $0.cancel() }
        continuation.finish()
    }
}
