import CLibEV
import CLibWebsockets
import Foundation
import ParleySync

/// The libev loop (epoll on Linux, kqueue on macOS) a libwebsockets context runs on, and the
/// wake-up other threads use to end its wait.
///
/// lws' own loop calls `poll()` over every socket on every wake-up: with hundreds of realtime
/// sessions each sending an audio chunk every 20 ms, that scan was the largest single cost of
/// both the server and its clients. epoll's cost follows the sockets that are ready instead.
///
/// `@unchecked Sendable`: `wake` takes `live`'s lock, so it never touches a destroyed loop;
/// everything else runs on the service thread.
final class EventLoop: @unchecked Sendable {
    private let loop: OpaquePointer
    private let wakeWatcher: UnsafeMutablePointer<ev_async>
    /// The one-element array `lws_context_creation_info.foreign_loops` points at.
    private let foreignLoops: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    private let live = Locked(true)

    /// Creates the loop; `nil` when libev cannot.
    init?() {
        guard let loop = parley_ev_loop_new() else { return nil }
        self.loop = loop
        wakeWatcher = .allocate(capacity: 1)
        wakeWatcher.initialize(to: ev_async())
        parley_ev_wake_start(loop, wakeWatcher)
        foreignLoops = .allocate(capacity: 1)
        foreignLoops.initialize(to: UnsafeMutableRawPointer(loop))
    }

    deinit {
        foreignLoops.deallocate()
        wakeWatcher.deallocate()
    }

    /// Makes the context about to be created from `info` run its sockets and timers on this loop.
    func adopt(_ info: inout lws_context_creation_info) {
        info.options |= UInt64(LWS_SERVER_OPTION_LIBEV)
        info.foreign_loops = foreignLoops
    }

    /// Any thread: ends the service thread's current or next wait.
    func wake() {
        live.withLock { live in
            if live { ev_async_send(loop, wakeWatcher) }
        }
    }

    /// The thread-specific key under which a service thread records the loop it runs.
    private static let currentLoopKey: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        return key
    }()

    /// Service thread, before its first `runOnce`: records that this thread runs the loop.
    func enterServiceThread() {
        pthread_setspecific(Self.currentLoopKey, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Whether the caller runs on this loop's service thread (where lws may be called directly,
    /// and where nothing needs waking: the thread runs queued work before it waits again).
    var isCurrent: Bool {
        pthread_getspecific(Self.currentLoopKey) == Unmanaged.passUnretained(self).toOpaque()
    }

    /// Service thread: handles the events ready now, first waiting for one if `waiting`.
    func runOnce(waiting: Bool) {
        parley_ev_run_once(loop, waiting ? 1 : 0)
    }

    /// Service thread, between passes: runs now the watchers waiting for `descriptors` to be
    /// writable, as if the kernel had just reported them writable. Descriptors nobody waits
    /// on for writing are left alone.
    func reportWritable(_ descriptors: some Sequence<Int32>) {
        for descriptor in descriptors { ev_feed_fd_event(loop, descriptor, Int32(EV_WRITE)) }
        ev_invoke_pending(loop)
    }

    /// Service thread, after the context on it is destroyed: frees the loop.
    func destroy() {
        live.withLock { $0 = false }
        ev_async_stop(loop, wakeWatcher)
        ev_loop_destroy(loop)
    }
}
