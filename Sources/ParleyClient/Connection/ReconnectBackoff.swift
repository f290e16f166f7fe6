import Foundation

/// How long to wait before each reconnection attempt: a growing ladder of delays with jitter,
/// back to the first step once a session opened. A pure value; the randomness is passed in.
///
/// ```swift
/// var backoff = ReconnectBackoff.standard
/// let wait = backoff.nextDelay(random: .random(in: 0...1))   // 0.4…0.6 s
/// ```
public struct ReconnectBackoff: Sendable, Hashable {
    /// The delays of the first, second, … attempt; the last one repeats.
    public var steps: [Duration]
    /// How far each delay may stray, as a fraction (0.2 = ±20 %), so clients that lost the
    /// same server do not all come back in the same instant.
    public var jitter: Double
    /// Failed attempts since the last open session.
    public private(set) var failures = 0

    /// Creates a backoff; `steps` must not be empty (an empty ladder waits one second).
    public init(steps: [Duration], jitter: Double = 0.2) {
        self.steps = steps.isEmpty ? [.seconds(1)] : steps
        self.jitter = min(max(jitter, 0), 1)
    }

    /// 0.5, 1, 2, 4, 8, then every 15 seconds, ±20 %.
    public static let standard = ReconnectBackoff(
        steps: [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(15)]
    )

    /// The wait before the next attempt, counting one more failure.
    /// - Parameter random: a number from 0 to 1 that places the delay inside the jitter band.
    public mutating func nextDelay(random: Double) -> Duration {
        let base = steps[min(failures, steps.count - 1)]
        failures += 1
        let factor = 1 - jitter + 2 * jitter * min(max(random, 0), 1)
        return base * factor
    }

    /// Starts again from the first step (after a session opened).
    public mutating func reset() { failures = 0 }
}
