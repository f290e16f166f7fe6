import CLibWebsockets
import Foundation
import ParleySync

/// Work that must run on a libwebsockets service thread (the only thread allowed to touch
/// the context's connections).
protocol ServiceThreadWork: AnyObject {
    /// Runs on the service thread after `ServiceLoop.schedule`. Returns whether it made an lws
    /// call that lws acts on only in a later service pass of its own (a timeout or a close, a
    /// connect, reading resumed); asking for a writable callback needs none.
    func runOnServiceThread() -> Bool
}

/// One libwebsockets context, the event loop it runs on and the dedicated thread that runs both.
///
/// Other threads never call into lws: they `schedule` work (or resume a task on `executor`),
/// which wakes the event loop. After each pass of the event loop the thread runs the Swift
/// jobs of `executor` and the work scheduled so far; it only waits for events when none is left.
/// A received WebSocket message also runs the jobs waiting then, inside its receive callback.
///
/// `@unchecked Sendable`: `state` is guarded by its lock; `context` is written once before the
/// thread starts and read-only afterwards; `afterServiceWork`, `writeBuffer` and
/// `connectionInCallback` are touched only on the service thread.
final class ServiceLoop: @unchecked Sendable {
    private struct State {
        var scheduled: [any ServiceThreadWork] = []
        var stopRequested = false
    }

    private let state = Locked(State())
    private let finished = Locked<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    private(set) var context: OpaquePointer?
    private let eventLoop: EventLoop
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

    /// Creates a loop for a context created on `eventLoop` (see `EventLoop.adopt`); call
    /// `start` to begin servicing it. `name` names its thread (15 bytes at most: Linux's limit).
    init(context: OpaquePointer, eventLoop: EventLoop, name: String) {
        self.context = context
        self.eventLoop = eventLoop
        self.name = name
        self.executor = ServiceLoopExecutor(eventLoop: eventLoop)
        self.writeBuffer = .allocate(byteCount: lwsPre + Self.writeBufferCapacity, alignment: 16)
    }

    deinit {
        writeBuffer.deallocate()
    }

    /// Whether the caller runs on this loop's service thread (where lws may be called directly).
    var isCurrent: Bool { eventLoop.isCurrent }

    /// The connection whose receive callback is running jobs now (service thread only); lws
    /// may write to it from there, but to no other connection.
    private(set) var connectionInCallback: OpaquePointer?

    /// Service thread, inside `wsi`'s receive callback: runs the jobs waiting now, usually the
    /// handler the message just resumed, so that its reply is written before lws reads the
    /// next ready connection instead of after all of them.
    func runJobs(inCallbackOf wsi: OpaquePointer) {
        guard connectionInCallback == nil else { return }
        connectionInCallback = wsi
        executor.runServiceThreadJobs()
        connectionInCallback = nil
    }

    /// Service thread, outside lws callbacks: serves the writable callbacks lws asked for on
    /// `connections` now, as the event loop would once the kernel reported their sockets
    /// writable. Only for sockets known to be writable (written to a moment ago, nothing left
    /// buffered); connections that asked for nothing are left alone.
    func serveWritableNow(_ connections: [OpaquePointer]) {
        // Lazily: this runs after every pass that completed a response, so no arrays are built.
        eventLoop.reportWritable(connections.lazy.map { lws_get_socket_fd($0) }.filter { $0 >= 0 })
    }

    /// Starts the service thread. `beforeEachWait` runs on it after every pass of the event loop
    /// and the work that followed, just before the loop looks for events again; `onExit` runs
    /// on it after the context is destroyed.
    func start(beforeEachWait: @escaping () -> Void = {}, onExit: @escaping @Sendable () -> Void = {}) {
        // The service thread is the only one that ever calls `beforeEachWait`.
        nonisolated(unsafe) let beforeEachWait = beforeEachWait
        let thread = Thread { [self] in
            // Named from inside: Foundation names only the running thread in the OS (where
            // `top -H` and `perf` show it).
            Thread.current.name = name
            eventLoop.enterServiceThread()
            runUntilStopped(beforeEachWait: beforeEachWait)
            onExit()
            let waiters = finished.withLock { finished -> [CheckedContinuation<Void, Never>] in
                finished.done = true
                defer { finished.waiters = [] }
                return finished.waiters
            }
            waiters.forEach { $0.resume() }
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    private func runUntilStopped(beforeEachWait: () -> Void) {
        guard let context else { return }
        // See `parley_lws_tick` (CLibWebsockets): without it a timeout can fire minutes late.
        let tick = UnsafeMutablePointer<parley_lws_tick>.allocate(capacity: 1)
        parley_lws_tick_start(tick, context)
        defer { tick.deallocate() }
        while true {
            let (stopRequested, nothingScheduled) = state.withLock { ($0.stopRequested, $0.scheduled.isEmpty) }
            if stopRequested { break }
            let idle = nothingScheduled && !executor.hasJobs && afterServiceWork.isEmpty
            eventLoop.runOnce(waiting: idle)
            runPendingWork()
            beforeEachWait()
        }
        executor.stop()
        // Work scheduled after the stop still runs, so no waiter is left hanging.
        drainScheduledWork()
        parley_lws_tick_stop(tick)
        lws_context_destroy(context)
        eventLoop.destroy()
        self.context = nil
    }

    /// Runs the jobs and scheduled work pending now. What they add meanwhile runs after the
    /// next event loop pass (which then does not wait): a task that keeps yielding cannot
    /// starve the sockets.
    ///
    /// lws arms its event loop timer (and serves input it holds) only when it returns to the
    /// loop from its own callbacks, so a timeout set out here (a close, a connect, an idle timer)
    /// would wait for some unrelated socket event. After work that made such a call, a
    /// self-addressed lws wake-up makes lws service and re-arm its timers in the next pass.
    private func runPendingWork() {
        executor.runJobs()
        let scheduledWorkNeedsService = drainScheduledWork()
        let ranAfterServiceWork = runAfterServiceWork()
        if scheduledWorkNeedsService || ranAfterServiceWork, let context { lws_cancel_service(context) }
    }

    /// Asks the service thread to run `work.runOnServiceThread()` soon. Safe from any thread.
    func schedule(_ work: any ServiceThreadWork) {
        let first = state.withLock { state -> Bool in
            state.scheduled.append(work)
            return state.scheduled.count == 1
        }
        if first, !eventLoop.isCurrent { eventLoop.wake() }
    }

    /// Service thread: runs `work` once the current lws callback and service pass are over,
    /// for lws calls that must not happen inside a callback.
    func afterService(_ work: @escaping () -> Void) {
        afterServiceWork.append(work)
    }

    /// Work queued by `afterService` (service thread only).
    private var afterServiceWork: [() -> Void] = []

    /// Runs the after-service work; returns whether there was any.
    private func runAfterServiceWork() -> Bool {
        guard !afterServiceWork.isEmpty else { return false }
        while !afterServiceWork.isEmpty {
            let work = afterServiceWork
            afterServiceWork = []
            work.forEach { $0() }
        }
        return true
    }

    /// Runs everything scheduled so far (service thread); returns whether any of it needs lws
    /// to service again (see `ServiceThreadWork`).
    @discardableResult
    private func drainScheduledWork() -> Bool {
        let work = state.withLock { state -> [any ServiceThreadWork] in
            defer { state.scheduled = [] }
            return state.scheduled
        }
        var needsService = false
        for item in work {
            if item.runOnServiceThread() { needsService = true }
        }
        return needsService
    }

    /// Stops the loop: the service thread finishes its iteration, destroys the context (which
    /// closes every connection) and exits. Returns when that is done.
    func stop() async {
        state.withLock { $0.stopRequested = true }
        eventLoop.wake()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let alreadyDone = finished.withLock { finished -> Bool in
                if !finished.done { finished.waiters.append(continuation) }
                return finished.done
            }
            if alreadyDone { continuation.resume() }
        }
    }
}
