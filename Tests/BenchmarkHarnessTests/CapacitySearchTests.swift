import BenchmarkHarness
import Testing

/// A system that holds up to `limit` sessions, and fails the runs listed in `noisyRuns` (by
/// their place in the order run) whatever their count: the host's slow stretch, a lazy start.
private struct FakeLoadedSystem {
    var limit: Int
    var noisyRuns: Set<Int> = []
    private(set) var runs = 0

    init(limit: Int, noisyRuns: Set<Int> = []) {
        self.limit = limit
        self.noisyRuns = noisyRuns
    }

    mutating func trial(_ sessions: Int) -> Bool {
        defer { runs += 1 }
        return sessions <= limit && !noisyRuns.contains(runs)
    }
}

@Suite struct CapacitySearchTests {
    @Test func growsThroughTheLadderThenDoublesUpToTheCeiling() {
        #expect(CapacitySearch(ladder: [1, 10, 50, 100], ceiling: 1_600).growthSteps == [1, 10, 50, 100, 200, 400, 800, 1_600])
        #expect(CapacitySearch(ladder: [1, 10, 50, 100], ceiling: 300).growthSteps == [1, 10, 50, 100, 200, 300])
        #expect(CapacitySearch(ladder: [20], ceiling: 16).growthSteps == [16])
    }

    @Test func bracketsAKnownLimitWithinTenPercentThoughOneRunBelowItFailed() async {
        // The fourth run (100 sessions, below the limit) fails once; the search runs it again.
        var system = FakeLoadedSystem(limit: 137, noisyRuns: [3])
        let bracket = await CapacitySearch(ladder: [1, 10, 50, 100], ceiling: 1_600).run(trial: { system.trial($0) }, holds: { $0 })
        let held = bracket.held?.count ?? 0, failed = bracket.failed?.count ?? 0
        #expect(held <= 137 && failed > 137, "\(bracket.summary)")
        #expect(Double(failed) <= Double(held) * 1.1, "\(bracket.summary)")
        #expect(bracket.isClose && !bracket.firstCountFailed)
        #expect(bracket.runs.filter { $0.count == 100 }.map(\.held) == [false, true])
        // Every failure that bounds the bracket was seen twice.
        #expect(bracket.runs.filter { $0.count == failed }.map(\.held) == [false, false])
        #expect(bracket.summary == "largest held 137, smallest failed 150")
    }

    @Test func aFirstCountThatFailsIsReportedAsSuchAndTheLimitIsSoughtBelowIt() async {
        var system = FakeLoadedSystem(limit: 5)
        let bracket = await CapacitySearch(ladder: [20], ceiling: 640).run(trial: { system.trial($0) }, holds: { $0 })
        #expect(bracket.firstCountFailed)
        #expect(bracket.held?.count == 5 && bracket.failed?.count == 6)
        #expect(bracket.summary == "largest held 5, smallest failed 6 (the first count tried, 20, failed)")
    }

    @Test func whenEvenOneFailsNoCountHeld() async {
        var system = FakeLoadedSystem(limit: 0)
        let bracket = await CapacitySearch(ladder: [1, 10], ceiling: 100).run(trial: { system.trial($0) }, holds: { $0 })
        #expect(bracket.held == nil && bracket.failed?.count == 1 && bracket.runs.count == 2)
        #expect(bracket.summary == "no count held, smallest failed 1 (the first count tried, 1, failed)")
    }

    @Test func aSystemThatHoldsEveryCountIsReportedAtTheCeilingNotAsALimit() async {
        var system = FakeLoadedSystem(limit: 10_000)
        let bracket = await CapacitySearch(ladder: [1, 10, 50, 100], ceiling: 400).run(trial: { system.trial($0) }, holds: { $0 })
        #expect(bracket.held?.count == 400 && bracket.failed == nil && !bracket.isClose)
        #expect(bracket.summary == "largest held 400, no count failed up to the ceiling")
    }
}
