/// The one rule every capacity figure of the benchmarks is found by (`compare.py` follows the
/// same rule in Python, `Benchmarks/LoadClient/capacity_search.py`):
///
/// 1. **Grow** through `ladder`, then double the last count, never past `ceiling`, until a
///    count fails.
/// 2. **Confirm every failure**: a count that fails is run once more and fails only if it fails
///    again. One run can fail for a reason that is not the load (a stretch where the host ran
///    the CPUs slower, a turn that paid for something started lazily); failing twice in a row
///    at the same count is the load. A count that holds once holds.
/// 3. **When the first count fails**, halve it until a count holds; the bracket says the first
///    count failed (`firstCountFailed`), and when even 1 failed, that no count held — never
///    that the first count is the limit.
/// 4. **Bisect** between the largest count that held and the smallest that failed until they
///    are within `precision` of each other (or next to each other).
///
/// Warming up is the trial's part: each trial brings its system up the same way (fresh
/// processes or not, one unmeasured turn first) before it measures, so both sides of a
/// comparison are treated alike.
///
/// ```swift
/// let search = CapacitySearch(ladder: [1, 10, 50, 100], ceiling: 1_600)
/// let bracket = try await search.run(trial: { try await load(sessions: $0) }, holds: \.withinLimit)
/// print(bracket.summary)  // "largest held 136, smallest failed 140"
/// ```
public struct CapacitySearch: Sendable {
    /// The counts tried first, in increasing order, before doubling.
    public var ladder: [Int]
    /// The largest count the search may try.
    public var ceiling: Int
    /// How close the bracket's two ends must come, as a fraction of the count that held.
    public var precision: Double

    /// A search through `ladder` then doubling up to `ceiling`, bisecting to `precision`.
    public init(ladder: [Int], ceiling: Int, precision: Double = 0.1) {
        self.ladder = ladder
        self.ceiling = ceiling
        self.precision = precision
    }

    /// Runs the search: `trial` runs the system at a count and returns its figures, `holds`
    /// says whether those figures held.
    /// - Throws: whatever `trial` throws.
    public func run<Figures>(
        trial: (Int) async throws -> Figures, holds: (Figures) -> Bool
    ) async rethrows -> CapacityBracket<Figures> {
        var bracket = CapacityBracket<Figures>(precision: precision)
        func verdict(_ count: Int) async throws -> CapacityRun<Figures> {
            let first = CapacityRun(count: count, figures: try await trial(count), holds: holds)
            bracket.runs.append(first)
            if first.held { return first }
            let again = CapacityRun(count: count, figures: try await trial(count), holds: holds)
            bracket.runs.append(again)
            return again
        }
        for count in growthSteps {
            let run = try await verdict(count)
            guard run.held else {
                bracket.failed = run
                break
            }
            bracket.held = run
        }
        guard let failed = bracket.failed else { return bracket }
        if bracket.held == nil {
            bracket.firstCountFailed = true
            var count = failed.count / 2
            while count >= 1, bracket.held == nil {
                let run = try await verdict(count)
                if run.held { bracket.held = run } else { bracket.failed = run }
                count /= 2
            }
        }
        while let held = bracket.held, let failed = bracket.failed, !Self.isClose(held: held.count, failed: failed.count, precision: precision) {
            let run = try await verdict((held.count + failed.count) / 2)
            if run.held { bracket.held = run } else { bracket.failed = run }
        }
        return bracket
    }

    /// The counts of the growing phase: the ladder's (up to the ceiling), then doubling to it.
    public var growthSteps: [Int] {
        var steps = ladder.filter { $0 >= 1 && $0 < ceiling }
        var next = steps.last.map { $0 * 2 } ?? ceiling
        while next < ceiling {
            steps.append(next)
            next *= 2
        }
        return steps + [ceiling]
    }

    /// Whether a bracket from `held` to `failed` is narrow enough to stop.
    static func isClose(held: Int, failed: Int, precision: Double) -> Bool {
        failed - held <= 1 || Double(failed) <= Double(held) * (1 + precision)
    }
}

/// One trial of a capacity search: the count, what it measured, and whether that held.
public struct CapacityRun<Figures> {
    /// The count tried (sessions, calls).
    public var count: Int
    /// What the trial measured.
    public var figures: Figures
    /// Whether the system held the count.
    public var held: Bool

    init(count: Int, figures: Figures, holds: (Figures) -> Bool) {
        self.count = count
        self.figures = figures
        self.held = holds(figures)
    }
}

extension CapacityRun: Sendable where Figures: Sendable {}

/// What a capacity search found: the largest count that held and the smallest that failed.
public struct CapacityBracket<Figures> {
    /// Every trial, in the order run (a confirmed failure is two runs at one count).
    public var runs: [CapacityRun<Figures>] = []
    /// The run at the largest count that held; `nil` when none did.
    public var held: CapacityRun<Figures>?
    /// The second run at the smallest count that failed; `nil` when every count up to the ceiling held.
    public var failed: CapacityRun<Figures>?
    /// Whether the search's first count failed, so it searched below where it started.
    public var firstCountFailed = false
    /// The precision the search bisected to.
    public var precision: Double

    init(precision: Double) { self.precision = precision }

    /// Whether the bracket has both ends within the search's precision.
    public var isClose: Bool {
        guard let held, let failed else { return false }
        return CapacitySearch.isClose(held: held.count, failed: failed.count, precision: precision)
    }

    /// The bracket in words: "largest held 136, smallest failed 140", with what is missing
    /// said as such ("no count held", "no count failed up to the ceiling").
    public var summary: String {
        "\(held.map { "largest held \($0.count)" } ?? "no count held"), \(failedSummary)"
    }

    /// The bracket's upper end in words: "smallest failed 140", "smallest failed 6 (the first
    /// count tried, 20, failed)" or "no count failed up to the ceiling".
    public var failedSummary: String {
        guard let failed else { return "no count failed up to the ceiling" }
        let first = firstCountFailed ? " (the first count tried, \(runs[0].count), failed)" : ""
        return "smallest failed \(failed.count)\(first)"
    }
}

extension CapacityBracket: Sendable where Figures: Sendable {}
