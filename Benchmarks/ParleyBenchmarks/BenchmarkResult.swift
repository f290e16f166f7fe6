import Foundation

/// One measured figure, printed as a tab-separated line and collected into BENCHMARKS.md.
struct BenchmarkResult: Sendable {
    /// The area the figure belongs to, for example `network` or `audio`.
    var area: String
    /// What was measured, for example `GET req/s, 50 connections`.
    var name: String
    /// The measured value.
    var value: Double
    /// The unit of `value`.
    var unit: String
    /// The target from the issue, in words (`>= 2000x`), or empty when there is none.
    var target: String
    /// Whether the figure meets the target; `nil` when there is no target.
    var meetsTarget: Bool?

    /// The line `scripts/bench` parses: area, name, value, unit, target, verdict.
    var line: String {
        let verdict = meetsTarget.map { $0 ? "pass" : "MISS" } ?? "-"
        return [area, name, String(format: "%.3f", value), unit, target, verdict].joined(separator: "\t")
    }
}
