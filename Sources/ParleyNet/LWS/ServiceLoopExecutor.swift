import Foundation
import ParleySync

/// A task executor whose jobs run on a service loop's thread, between two event loop passes.
///
/// Connection handlers prefer it: a handler resumed by a received message then runs on the
/// thread that received it, and what it sends is written by that same thread, with no thread
/// hop or wake-up in between. Actor-isolated code still runs on its actor; code that must not
/// share the network thread opts out with `withTaskExecutorPreference(globalConcurrentExecutor)`.
/// Once the loop has stopped, jobs go to the global executor.
///
/// `@unchecked Sendable`: `state` is guarded by its lock; the other properties are the service
/// thread's.
final class ServiceLoopExecutor: TaskExecutor, @unchecked Sendable {
    private struct State {
        var stopped = false
        var jobs: [UnownedJob] = []
    }

    private let state = Locked(State())
    private let eventLoop: EventLoop

    init(eventLoop: EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Queues `job`; from another thread it also wakes the loop.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if eventLoop.isCurrent {
            // The usual case: a handler resumed by a message the service thread just received.
            // Its own queue needs no lock.
            if stoppedOnServiceThread { globalConcurrentExecutor.enqueue(job) } else { serviceThreadJobs.append(job) }
            return
        }
        let (accepted, first) = state.withLock { state -> (Bool, Bool) in
            guard !state.stopped else { return (false, false) }
            state.jobs.append(job)
            return (true, state.jobs.count == 1)
        }
        if !accepted {
            globalConcurrentExecutor.enqueue(job)
        } else if first {
            eventLoop.wake()
        }
    }

    /// Service thread: whether jobs are waiting to run.
    var hasJobs: Bool { !serviceThreadJobs.isEmpty || state.withLock { !$0.jobs.isEmpty } }

    /// Service thread: runs the jobs enqueued so far, from any thread.
    func runJobs() {
        runServiceThreadJobs()
        // Swaps the queue with an empty array that kept its capacity, so that queueing a job
        // allocates nothing.
        var jobs = spareJobs
        spareJobs = []
        state.withLock { swap(&$0.jobs, &jobs) }
        run(&jobs)
        spareJobs = jobs
    }

    /// Service thread: runs the jobs the service thread itself enqueued so far, taking no lock.
    /// Jobs they enqueue in turn wait for the next call, so a task that keeps yielding cannot
    /// hold the thread.
    func runServiceThreadJobs() {
        guard !serviceThreadJobs.isEmpty else { return }
        var jobs = spareServiceThreadJobs
        spareServiceThreadJobs = []
        swap(&serviceThreadJobs, &jobs)
        run(&jobs)
        spareServiceThreadJobs = jobs
    }

    /// Runs `jobs` in order and empties the array, keeping its capacity.
    private func run(_ jobs: inout [UnownedJob]) {
        let executor = asUnownedTaskExecutor()
        for job in jobs { job.runSynchronously(on: executor) }
        jobs.removeAll(keepingCapacity: true)
    }

    // Service thread only: jobs it enqueued itself, and the empty arrays with capacity that
    // the queues swap with.
    @exclusivity(unchecked) private var serviceThreadJobs: [UnownedJob] = []
    @exclusivity(unchecked) private var spareServiceThreadJobs: [UnownedJob] = []
    @exclusivity(unchecked) private var spareJobs: [UnownedJob] = []
    @exclusivity(unchecked) private var stoppedOnServiceThread = false

    /// Service thread, once the loop stopped: later jobs run on the global executor, and so do
    /// those still waiting.
    func stop() {
        stoppedOnServiceThread = true
        let jobs = serviceThreadJobs + state.withLock { state -> [UnownedJob] in
            state.stopped = true
            defer { state.jobs = [] }
            return state.jobs
        }
        serviceThreadJobs = []
        for job in jobs { globalConcurrentExecutor.enqueue(job) }
    }
}
