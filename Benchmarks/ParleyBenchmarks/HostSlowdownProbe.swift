import Foundation

/// When the host ran this machine's CPUs slower: `host_slowdown_probe` (`Benchmarks/HostProbe`)
/// in its own process times a fixed piece of arithmetic every 2 ms in its own CPU time, and
/// reports the stretches where that took more than 3 times its median.
///
/// A virtual machine cannot see its host taking the CPUs away in fine slices: the time still
/// counts as the running thread's. Every stage of a turn slows down together then, and work
/// queues up behind it, so a latency tail measured across such a stretch is the host's.
/// The benchmarks print these stretches next to their figures; the targets are still judged on
/// every turn.
final class HostSlowdownProbe {
    /// One slow stretch, in CLOCK_MONOTONIC microseconds, with the worst slowdown seen in it.
    struct Stretch {
        var startMicroseconds: Double
        var endMicroseconds: Double
        var worstRatio: Double
    }

    /// What the probe saw while it ran.
    struct Report {
        var stretches: [Stretch] = []
        var startMicroseconds: Double
        var endMicroseconds: Double

        /// The share of the time the CPUs ran slow, in percent.
        var slowPercent: Double {
            let total = endMicroseconds - startMicroseconds
            guard total > 0 else { return 0 }
            return stretches.reduce(0) { $0 + ($1.endMicroseconds - $1.startMicroseconds) } * 100 / total
        }

        /// How many times slower the CPUs ran at worst (1 when never slow).
        var worstRatio: Double { stretches.map(\.worstRatio).max() ?? 1 }

        /// Whether `time` (CLOCK_MONOTONIC microseconds) lies in a slow stretch, from `before`
        /// microseconds before one to `after` microseconds after it.
        func isNearSlowStretch(_ time: Double, before: Double, after: Double) -> Bool {
            stretches.contains { time >= $0.startMicroseconds - before && time <= $0.endMicroseconds + after }
        }
    }

    private let process: Process
    private let input: Pipe
    private let output: Pipe
    private let startMicroseconds: Double

    /// Starts the probe from `folder` (see `BenchmarkTools`).
    init(folder: URL) throws {
        process = Process()
        process.executableURL = folder.appendingPathComponent("host_slowdown_probe")
        process.arguments = ["2000", "4000"]
        input = Pipe()
        output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        startMicroseconds = monotonicMicroseconds()
        try process.run()
    }

    /// Stops the probe and returns what it saw.
    func stop() async throws -> Report {
        let endMicroseconds = monotonicMicroseconds()
        try input.fileHandleForWriting.close()
        let (text, status) = await remainingOutput(of: process, from: output)
        guard status == 0 else { throw BenchmarkToolError("host_slowdown_probe exited with \(status)") }
        var report = Report(startMicroseconds: startMicroseconds, endMicroseconds: endMicroseconds)
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 4, fields[0] == "slow", let start = Double(fields[1]), let end = Double(fields[2]),
                  let ratio = Double(fields[3]) else { continue }
            report.stretches.append(Stretch(startMicroseconds: start, endMicroseconds: end, worstRatio: ratio))
        }
        return report
    }

    /// Runs the probe alone for `seconds` (nothing else of the benchmark running).
    static func measureIdle(folder: URL, seconds: Double) async throws -> Report {
        let probe = try HostSlowdownProbe(folder: folder)
        try await Task.sleep(for: .seconds(seconds))
        return try await probe.stop()
    }
}

/// Now on CLOCK_MONOTONIC, in microseconds: the clock the C tools report times on.
func monotonicMicroseconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) * 1_000_000 + Double(now.tv_nsec) / 1000
}
