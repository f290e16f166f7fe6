import BenchmarkHarness
import Testing

@Suite struct PercentileTests {
    private let hundred = (1...100).map(Double.init).shuffled()

    @Test func isTheNearestRank() {
        #expect(percentile([3, 1, 2, 4], 50) == 2)
        #expect(percentile((1...10).map(Double.init), 90) == 9)
        #expect(percentile((1...10).map(Double.init), 99) == 10)
        #expect(percentile(hundred, 99) == 99)
        #expect(percentile(hundred, 50) == 50)
    }

    @Test func wholePercentilesOfWholeCountsAreExact() {
        // 0.07 × 100 is 7.000000000000001 in floating point: a rank taken from it is one too high.
        for p in 1...100 {
            #expect(percentile(hundred, Double(p)) == Double(p), "p\(p)")
        }
    }

    @Test func theEndsAreTheSmallestAndTheLargestValue() {
        #expect(percentile([5, 7, 6], 0) == 5)
        #expect(percentile([5, 7, 6], 100) == 7)
        #expect(percentile([42], 99) == 42)
    }

    @Test func ofNothingIsNotANumber() {
        #expect(percentile([], 50).isNaN)
    }
}
