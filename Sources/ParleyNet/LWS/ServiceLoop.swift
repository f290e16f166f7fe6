import CLibWebsockets
import Foundation

/// Work that must run on a libwebsockets service thread (the only thread allowed to touch
/// the context's connections).
protocol ServiceThreadWork: AnyObject {
    /// Runs on the service thread after `ServiceLoop.schedule`.
    func runOnServiceThread()
}

/// One libwebsockets context and the dedicated thread that services it.
///
/// Other threads never call into lws except `lws_cancel_service`: they `schedule` work, which
/// wakes the service thread; its `LWS_CALLBACK_EVENT_WAIT_CANCELLED` calls `drainScheduledWork`.
/// After each service pass the thread also runs the Swift jobs of `executor` and the work
/// scheduled so far; both wake the loop like `schedule` does.
///
/// `@unchecked Sendable`: `state` is guarded by its lock; `context` is written once before the
/// thread starts and read-only afterwards (cancellation goes through `state`);
/// `afterServiceWork` and `writeBuffer` are touched only on the service thread.
final class ServiceLoop: @unchecked Sendable {
    private struct State {
        /// The live context; `nil` once the loop stopped, so no one wakes a destroyed context.
        var context: OpaquePointer?
        var scheduled: [any ServiceThreadWork] = []
        var stopRequested = false
    }

    private let state = Locked(State())
    private let finished = Locked<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    private(set) var context: OpaquePointer?
    private let name: String
    /// Runs tasks that prefer it on this loop's thread (see `ServiceLoopExecutor`).
    let executor: ServiceLoopExecutor
    /// The service thread's staging area for `lws_write`: `lwsPre` bytes of headroom, then
    /// room for `writeBufferCapacity` payload bytes. lws copies whatever the socket does not
    /// take at once, so the buffer is free again when `lws_write` returns; reusing one warm
    /// buffer costs a copy but no allocation (and no page faults) per written message.
    let writeBuffer: UnsafeMutableRawPointer
    /// The largest payload `writeBuffer` holds.
    static let writeBufferCapacity = 64 << 10

    /// Creates a loop for an already created context; call `start` to begin servicing it.
    init(context: OpaquePointer, name: String) {
        self.context = context
        self.name = name
        self.executor = ServiceLoopExecutor(context: context)
        self.writeBuffer = .allocate(byteCount: lwsPre + Self.writeBufferCapacity, alignment: 16)
        state.withLock { $0.context = context }
    }

    deinit {
        writeBuffer.deallocate()
    }

    /// The thread-specific key under which a service thread records its loop.
    private static let currentLoopKey: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        return key
    }()

    /// Whether the caller runs on this loop's service thread (where lws may be called directly).
    var isCurrent: Bool {
        pthread_getspecific(Self.currentLoopKey) == Unmanaged.passUnretained(self).toOpaque()
    }

    /// Starts the service thread. `onExit` runs on that thread after the context is destroyed.
    func start(onExit: @escaping @Sendable () -> Void = {}) {
        let thread = Thread { [self] in
            pthread_setspecific(Self.currentLoopKey, Unmanaged.passUnretained(self).toOpaque())
            runUntilStopped()
            onExit()
            let waiters = finished.withLock { finished -> [CheckedContinuation<Void, Never>] in
                finished.done = true
                defer { finished.waiters = [] }
                return finished.waiters
            }
            waiters.forEach { $0.resume() }
        }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
    }

    private func runUntilStopped() {
        guard let context else { return }
        while !state.withLock({ $0.stopRequested }) {
            if lws_service(context, 0) < 0 { break }
            runPendingWork()
        }
        state.withLock { $0.context = nil }
        executor.stop()
        // Work scheduled after the stop still runs, so no waiter is left hanging.
        drainScheduledWork()
        lws_context_destroy(context)
        self.context = nil
    }

    /// Runs the jobs and scheduled work pending now. What they add meanwhile has woken the
    /// loop and runs after the next service pass: a task that keeps yielding cannot starve the
    /// sockets.
    private func runPendingWork() {
        executor.runJobs()
        drainScheduledWork()
        runAfterServiceWork()
    }

    /// Asks the service thread to run `work.runOnServiceThread()` soon. Safe from any thread.
    func schedule(_ work: any ServiceThreadWork) {
        // Also from the service thread itself: lws runs its timers before it polls, so work
        // scheduled from a timer's callback would otherwise wait for the next event.
        state.withLock { state in
            state.scheduled.append(work)
            if state.scheduled.count == 1, let context = state.context {
                lws_cancel_service(context)
            }
        }
    }

    /// Service thread: runs `work` once the current lws callback and service pass are over,
    /// for lws calls that must not happen inside a callback.
    func afterService(_ work: @escaping () -> Void) {
        afterServiceWork.append(work)
    }

    /// Work queued by `afterService` (service thread only).
    private var afterServiceWork: [() -> Void] = []

    private func runAfterServiceWork() {
        while !afterServiceWork.isEmpty {
            let work = afterServiceWork
            afterServiceWork = []
            work.forEach { $0() }
        }
    }

    /// Runs everything scheduled so far; called on the service thread.
    func drainScheduledWork() {
        let work = state.withLock { state -> [any ServiceThreadWork] in
            defer { state.scheduled = [] }
            return state.scheduled
        }
        for item in work { item.runOnServiceThread() }
    }

    /// Stops the loop: the service thread finishes its iteration, destroys the context (which
    /// closes every connection) and exits. Returns when that is done.
    func stop() async {
        state.withLock { state in
            state.stopRequested = true
            if let context = state.context { lws_cancel_service(context) }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let alreadyDone = finished.withLock { finished -> Bool in
                if !finished.done { finished.waiters.append(continuation) }
                return finished.done
            }
            if alreadyDone { continuation.resume() }
        }
    }
}
