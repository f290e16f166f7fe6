import Foundation

/// How long tests wait for what they expect, scaled for slow builds.
///
/// `PARLEY_TEST_TIME_SCALE` (default 1) multiplies every deadline that goes through here:
/// `scripts/test --sanitize` sets it, because code under ThreadSanitizer or AddressSanitizer runs
/// several times slower and a deadline that holds on a plain build would fail there for no bug.
public enum TestDeadline {
    /// The factor deadlines are multiplied by.
    public static let scale: Double = {
        guard let raw = ProcessInfo.processInfo.environment["PARLEY_TEST_TIME_SCALE"], let value = Double(raw), value >= 1 else { return 1 }
        return value
    }()

    /// `seconds`, scaled.
    public static func seconds(_ seconds: Double) -> Duration {
        .milliseconds(Int((seconds * scale * 1000).rounded()))
    }

    /// `duration`, scaled.
    public static func scaled(_ duration: Duration) -> Duration { duration * scale }
}
