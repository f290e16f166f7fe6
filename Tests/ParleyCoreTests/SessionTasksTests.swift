import ParleySync
import Testing
import ParleyTesting
@testable import ParleyCore

/// A session's tasks are tracked until they return, and closing cancels and awaits them all.
@Suite struct SessionTasksTests {
    @Test func aTaskCountsAsRunningUntilItReturns() async {
        let tasks = SessionTasks()
        let gate = AsyncGate()
        let task = tasks.start { await gate.wait() }
        #expect(!tasks.isEmpty)
        gate.open()
        await task.value
        #expect(tasks.isEmpty)
    }

    @Test func aTaskThatProducesAValueHandsItOver() async throws {
        let tasks = SessionTasks()
        let task = tasks.start { () async throws -> Int in 42 }
        #expect(try await task.value == 42)
        #expect(tasks.isEmpty)
    }

    @Test func closingCancelsEveryTaskAndReturnsOnceEachHasEnded() async {
        let tasks = SessionTasks()
        let gate = AsyncGate()
        let ended = Locked(0)
        for _ in 1...3 {
            tasks.start {
                await gate.wait()  // lets a cancelled task through
                ended.withLock { $0 += 1 }
            }
        }
        await gate.waitForArrivals(3)
        tasks.cancelAll()
        await tasks.waitForAll()
        #expect(ended.withLock { $0 } == 3)
        #expect(tasks.isEmpty)
    }

    @Test func aTaskStartedAfterClosingIsCancelledAtOnce() async {
        let tasks = SessionTasks()
        tasks.cancelAll()
        await tasks.waitForAll()
        let gate = AsyncGate()
        // Only cancellation lets the task through the closed gate.
        await tasks.start { await gate.wait() }.value
        #expect(tasks.isEmpty)
    }

    @Test func aTaskStartedWhileClosingIsAwaitedToo() async {
        let tasks = SessionTasks()
        let gate = AsyncGate()
        let followerEnded = Locked(false)
        tasks.start {
            await gate.wait()
            // Started by a task that is being cancelled, as a session's callback might.
            tasks.start {
                await gate.wait()
                followerEnded.withLock { $0 = true }
            }
        }
        await gate.waitForArrivals(1)
        tasks.cancelAll()
        await tasks.waitForAll()
        #expect(followerEnded.withLock { $0 })
        #expect(tasks.isEmpty)
    }

    @Test func offThePoolWorkHandsBackItsResult() async {
        #expect(await TurnCompletionQueue.run { 7 } == 7)
    }

    @Test func offThePoolWorkOfACancelledTaskIsSkipped() async {
        let ran = Locked(false)
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await TurnCompletionQueue.run {
                ran.withLock { $0 = true }
                return 1
            }
        }
        #expect(await cancelled.value == nil)
        // The queue is serial: work queued before this would have run by now.
        _ = await TurnCompletionQueue.run { 0 }
        #expect(ran.withLock { $0 } == false)
    }

    @Test func aHandoffKeepsTheFirstValueEvenWhenGivenBeforeTheWait() async {
        let handoff = Handoff<Int>()
        handoff.give(1)
        handoff.give(2)
        let value = await withCheckedContinuation { handoff.wait(with: $0) }
        #expect(value == 1)
    }
}
