import CLibWebsockets
import Foundation

/// A task executor whose jobs run on a service loop's thread, between two lws service passes.
///
/// Connection handlers prefer it: a handler resumed by a received message then runs on the
/// thread that received it, and what it sends is written by that same thread, with no thread
/// hop or wake-up in between. Actor-isolated code still runs on its actor; code that must not
/// share the network thread opts out with `withTaskExecutorPreference(globalConcurrentExecutor)`.
/// Once the loop has stopped, jobs go to the global executor.
///
/// `@unchecked Sendable`: `state` is guarded by its lock.
final class ServiceLoopExecutor: TaskExecutor, @unchecked Sendable {
    private struct State {
        /// The context to wake when a job arrives from another thread; `nil` once stopped.
        var context: OpaquePointer?
        var jobs: [UnownedJob] = []
    }

    private let state = Locked(State())

    init(context: OpaquePointer) {
        state.withLock { $0.context = context }
    }

    /// Queues `job` and wakes the loop (also when called on the service thread: a job resumed
    /// from one of lws' timer callbacks must not wait for the next socket event).
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let accepted = state.withLock { state -> Bool in
            guard let context = state.context else { return false }
            state.jobs.append(job)
            if state.jobs.count == 1 { lws_cancel_service(context) }
            return true
        }
        if !accepted { globalConcurrentExecutor.enqueue(job) }
    }

    /// Service thread: runs the jobs enqueued so far.
    func runJobs() {
        let jobs = state.withLock { state -> [UnownedJob] in
            defer { state.jobs = [] }
            return state.jobs
        }
        let executor = asUnownedTaskExecutor()
        for job in jobs { job.runSynchronously(on: executor) }
    }

    /// Service thread, once the loop stopped: later jobs run on the global executor, and so do
    /// those still waiting.
    func stop() {
        let jobs = state.withLock { state -> [UnownedJob] in
            state.context = nil
            defer { state.jobs = [] }
            return state.jobs
        }
        for job in jobs { globalConcurrentExecutor.enqueue(job) }
    }
}
