import Foundation
import ParleyClient
import Testing

@Suite struct ReconnectBackoffTests {
    @Test func delaysClimbTheLadderAndRepeatTheLastStep() {
        var backoff = ReconnectBackoff(steps: [.milliseconds(100), .milliseconds(400)], jitter: 0.5)
        #expect(backoff.nextDelay(random: 0.5) == .milliseconds(100))
        #expect(backoff.nextDelay(random: 0.5) == .milliseconds(400))
        #expect(backoff.nextDelay(random: 0.5) == .milliseconds(400))
        #expect(backoff.failures == 3)
    }

    @Test func jitterStaysInsideItsBand() {
        var backoff = ReconnectBackoff(steps: [.seconds(1)], jitter: 0.25)
        #expect(backoff.nextDelay(random: 0) == .milliseconds(750))
        #expect(backoff.nextDelay(random: 1) == .milliseconds(1250))
        #expect(backoff.nextDelay(random: 7) == .milliseconds(1250))
        #expect(backoff.nextDelay(random: -1) == .milliseconds(750))
    }

    @Test func resetStartsFromTheFirstStep() {
        var backoff = ReconnectBackoff(steps: [.milliseconds(100), .seconds(5)], jitter: 0)
        _ = backoff.nextDelay(random: 0)
        _ = backoff.nextDelay(random: 0)
        backoff.reset()
        #expect(backoff.nextDelay(random: 0) == .milliseconds(100))
    }

    @Test func anEmptyLadderWaitsOneSecond() {
        var backoff = ReconnectBackoff(steps: [], jitter: 0)
        #expect(backoff.nextDelay(random: 0) == .seconds(1))
    }
}
