import Foundation

/// Where a session reads the time for its latency figures; tests inject a manual one.
public struct MonotonicClock: Sendable {
    private let read: @Sendable () -> Duration

    /// A clock that reads `read`.
    public init(_ read: @escaping @Sendable () -> Duration) { self.read = read }

    /// The system's continuous clock.
    public static var system: MonotonicClock {
        let origin = ContinuousClock.now
        return MonotonicClock { ContinuousClock.now - origin }
    }

    /// The current time since an arbitrary origin.
    public var now: Duration { read() }

    /// Milliseconds from `start` to now.
    public func millisecondsSince(_ start: Duration) -> Double {
        (now - start).timeInterval * 1000
    }
}
