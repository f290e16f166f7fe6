import Foundation

/// The median of `repetitions` timings of `iterations` calls to `body`, in seconds per call:
/// on a shared machine the best run flatters and the worst is someone else's work, the
/// median is what a user can expect.
func medianSecondsPerCall(repetitions: Int = 5, iterations: Int = 1, _ body: () throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    var timings: [Double] = []
    for _ in 0..<repetitions {
        let start = clock.now
        for _ in 0..<iterations { try body() }
        let elapsed = clock.now - start
        timings.append((Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18) / Double(iterations))
    }
    return timings.sorted()[timings.count / 2]
}
