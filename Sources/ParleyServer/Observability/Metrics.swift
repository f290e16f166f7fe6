import Foundation

/// The server's counters and latency histograms, rendered in the Prometheus text format.
///
/// `@unchecked Sendable`: every stored property is guarded by `lock`.
public final class Metrics: @unchecked Sendable {
    /// Histogram bucket upper bounds, in milliseconds.
    static let bucketsMs: [Double] = [5, 10, 25, 50, 100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000, 10000]

    private struct Histogram {
        var counts = [Int](repeating: 0, count: Metrics.bucketsMs.count)
        var sum = 0.0
        var count = 0

        mutating func observe(_ value: Double) {
            for (index, bound) in Metrics.bucketsMs.enumerated() where value <= bound { counts[index] += 1 }
            sum += value
            count += 1
        }
    }

    private let lock = NSLock()
    private var activeSessions = 0
    private var sessionsTotal = 0
    private var turnsTotal = 0
    private var errorsByCategory: [String: Int] = [:]
    private var refusalsByDoor: [String: Int] = [:]
    private var handoffsByOutcome: [String: Int] = [:]
    private var stageLatencies: [String: Histogram] = [:]

    /// Creates empty metrics.
    public init() {}

    /// A realtime session opened.
    public func sessionOpened() { lock.withLock { activeSessions += 1; sessionsTotal += 1 } }
    /// A realtime session closed.
    public func sessionClosed() { lock.withLock { activeSessions -= 1 } }
    /// Sessions open now.
    public var activeSessionCount: Int { lock.withLock { activeSessions } }
    /// A response finished.
    public func turnFinished() { lock.withLock { turnsTotal += 1 } }
    /// An error reached a client.
    public func errorReported(category: String) { lock.withLock { errorsByCategory[category, default: 0] += 1 } }
    /// A door refused a caller (`door`: websocket, webrtc, twilio, local_token, metrics; `reason`: why).
    public func doorRefused(door: String, reason: String) { lock.withLock { refusalsByDoor["\(door)|\(reason)", default: 0] += 1 } }
    /// A transfer tool was called (`outcome`: handed_off or refused).
    public func handoffTried(outcome: String) { lock.withLock { handoffsByOutcome[outcome, default: 0] += 1 } }
    /// Records a per-stage latency (`transcription`, `first_token`, `first_audio`).
    public func observe(stage: String, milliseconds: Double) {
        lock.withLock { stageLatencies[stage, default: Histogram()].observe(milliseconds) }
    }

    /// The metrics in the Prometheus text exposition format, with the restart count of the
    /// supervised provider processes.
    public func prometheusText(providerRestarts: Int = 0) -> String {
        lock.withLock {
            var lines: [String] = [
                "# HELP parley_active_sessions Realtime sessions open now.",
                "# TYPE parley_active_sessions gauge",
                "parley_active_sessions \(activeSessions)",
                "# HELP parley_sessions_total Realtime sessions opened.",
                "# TYPE parley_sessions_total counter",
                "parley_sessions_total \(sessionsTotal)",
                "# HELP parley_turns_total Responses finished.",
                "# TYPE parley_turns_total counter",
                "parley_turns_total \(turnsTotal)",
                "# HELP parley_provider_restarts_total Restarts of supervised provider processes.",
                "# TYPE parley_provider_restarts_total counter",
                "parley_provider_restarts_total \(providerRestarts)",
                "# HELP parley_errors_total Errors reported to clients, by category.",
                "# TYPE parley_errors_total counter",
            ]
            for (category, count) in errorsByCategory.sorted(by: { $0.key < $1.key }) {
                lines.append("parley_errors_total{category=\"\(category)\"} \(count)")
            }
            lines.append("# HELP parley_door_refusals_total Callers a door refused, by door and reason.")
            lines.append("# TYPE parley_door_refusals_total counter")
            for (key, count) in refusalsByDoor.sorted(by: { $0.key < $1.key }) {
                let parts = key.split(separator: "|", maxSplits: 1).map(String.init)
                lines.append("parley_door_refusals_total{door=\"\(parts[0])\",reason=\"\(parts[1])\"} \(count)")
            }
            lines.append("# HELP parley_handoffs_total Transfers between agents the models asked for, by outcome.")
            lines.append("# TYPE parley_handoffs_total counter")
            for (outcome, count) in handoffsByOutcome.sorted(by: { $0.key < $1.key }) {
                lines.append("parley_handoffs_total{outcome=\"\(outcome)\"} \(count)")
            }
            lines.append("# HELP parley_stage_latency_ms Per-stage latency from the end of the user's speech, in milliseconds.")
            lines.append("# TYPE parley_stage_latency_ms histogram")
            for (stage, histogram) in stageLatencies.sorted(by: { $0.key < $1.key }) {
                for (index, bound) in Self.bucketsMs.enumerated() {
                    lines.append("parley_stage_latency_ms_bucket{stage=\"\(stage)\",le=\"\(Int(bound))\"} \(histogram.counts[index])")
                }
                lines.append("parley_stage_latency_ms_bucket{stage=\"\(stage)\",le=\"+Inf\"} \(histogram.count)")
                lines.append("parley_stage_latency_ms_sum{stage=\"\(stage)\"} \(histogram.sum)")
                lines.append("parley_stage_latency_ms_count{stage=\"\(stage)\"} \(histogram.count)")
            }
            return lines.joined(separator: "\n") + "\n"
        }
    }
}
