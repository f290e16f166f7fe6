import Foundation

/// A task executor whose jobs run on a service loop's thread, between two event loop passes.
///
/// Connection handlers prefer it: a handler resumed by a received message then runs on the
/// thread that received it, and what it sends is written by that same thread, with no thread
/// hop or wake-up in between. Actor-isolated code still runs on its actor; code that must not
/// share the network thread opts out with `withTaskExecutorPreference(globalConcurrentExecutor)`.
/// Once the loop has stopped, jobs go to the global executor.
///
/// `@unchecked Sendable`: `state` is guarded by its lock; `spareJobs` is the service thread's.
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
        let (accepted, first) = state.withLock { state -> (Bool, Bool) in
            guard !state.stopped else { return (false, false) }
            state.jobs.append(job)
            return (true, state.jobs.count == 1)
        }
        if !accepted {
            globalConcurrentExecutor.enqueue(job)
        } else if first, !eventLoop.isCurrent {
            eventLoop.wake()
        }
    }

    /// Whether jobs are waiting to run.
    var hasJobs: Bool { state.withLock { !$0.jobs.isEmpty } }

    /// Service thread: runs the jobs enqueued so far.
    func runJobs() {
        // Swaps the queue with an empty array that kept its capacity, so that queueing a job
        // (usually one per received message) allocates nothing.
        var jobs = spareJobs
        spareJobs = []
        state.withLock { swap(&$0.jobs, &jobs) }
        let executor = asUnownedTaskExecutor()
        for job in jobs { job.runSynchronously(on: executor) }
        jobs.removeAll(keepingCapacity: true)
        spareJobs = jobs
    }

    /// The service thread's empty job array with capacity, handed to `state` by `runJobs`.
    private var spareJobs: [UnownedJob] = []

    /// Service thread, once the loop stopped: later jobs run on the global executor, and so do
    /// those still waiting.
    func stop() {
        let jobs = state.withLock { state -> [UnownedJob] in
            state.stopped = true
            defer { state.jobs = [] }
            return state.jobs
        }
        for job in jobs { globalConcurrentExecutor.enqueue(job) }
    }
}
