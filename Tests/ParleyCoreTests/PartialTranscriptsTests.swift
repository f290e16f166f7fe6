import Testing
import ParleyTesting
@testable import ParleyCore

/// When a pass over the turn in progress for a partial transcript is due.
@Suite struct PartialTranscriptsTests {
    @Test func aPassIsDueEveryIntervalFromTheTurnsStart() {
        var partials = PartialTranscripts()
        partials.turnStarted(atMs: 1_000)
        let early = partials.isDue(atMs: 1_400, intervalMs: 500)
        let due = partials.isDue(atMs: 1_500, intervalMs: 500)
        let again = partials.isDue(atMs: 1_900, intervalMs: 500)
        let next = partials.isDue(atMs: 2_000, intervalMs: 500)
        #expect(!early && due && !again && next)
    }

    @Test func noPassIsDueWithoutAnInterval() {
        var partials = PartialTranscripts()
        let due = partials.isDue(atMs: 60_000, intervalMs: 0)
        #expect(!due)
    }

    @Test func onePassRunsAtATimeEvenWhenCancelledUntilItReportsBack() {
        var partials = PartialTranscripts()
        let gate = AsyncGate()
        defer { gate.open() }
        let pass = Task { await gate.wait() }  // runs until cancelled
        let due = partials.isDue(atMs: 500, intervalMs: 500)
        #expect(due)
        partials.started(pass)
        partials.cancel()
        let whileRunning = partials.isDue(atMs: 5_000, intervalMs: 500)
        #expect(!whileRunning && pass.isCancelled)
        partials.passEnded()
        let afterwards = partials.isDue(atMs: 5_000, intervalMs: 500)
        #expect(afterwards)
    }

    @Test func aDroppedPassMakesRoomAtOnce() {
        var partials = PartialTranscripts()
        let gate = AsyncGate()
        defer { gate.open() }
        let pass = Task { await gate.wait() }  // runs until cancelled
        _ = partials.isDue(atMs: 500, intervalMs: 500)
        partials.started(pass)
        partials.drop()
        let due = partials.isDue(atMs: 1_000, intervalMs: 500)
        #expect(due && pass.isCancelled)
    }
}
