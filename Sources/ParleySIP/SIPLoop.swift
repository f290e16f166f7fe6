import CLibre
import Foundation
import ParleySync

/// libre's event loop, on a thread of its own and one per process: every libre object is
/// made, used and freed there, and every libre callback runs there. Other threads hand work
/// over with `perform`, through libre's thread-safe message queue.
///
/// `@unchecked Sendable`: `queue` is written once, on the loop thread, before `ready` is
/// signalled; after that it is only read (`mqueue_push` is thread-safe).
final class SIPLoop: @unchecked Sendable {
    /// The process's loop, started on first use.
    static let shared = SIPLoop()

    private var queue: OpaquePointer?
    private let ready = DispatchSemaphore(value: 0)
    private let threadID = Locked<pthread_t?>(nil)

    private init() {
        let thread = Thread { [self] in run() }
        thread.name = "parley-sip"
        thread.start()
        ready.wait()
    }

    private func run() {
        threadID.withLock { $0 = pthread_self() }
        _ = libre_init()
        // libre's epoll loop refuses descriptors above its table size: make room for a busy process.
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        _ = fd_setsize(Int32(min(limit.rlim_cur, 1 << 20)))
        _ = mqueue_alloc(&queue, sipLoopMessage, nil)
        ready.signal()
        // No signal handler: the server's own handlers stay in charge of SIGINT and SIGTERM.
        _ = re_main(nil)
    }

    /// Whether the caller runs on the loop thread.
    var isCurrent: Bool {
        guard let loop = threadID.withLock({ $0 }) else { return false }
        return pthread_equal(loop, pthread_self()) != 0
    }

    /// Runs `work` on the loop thread, soon.
    func perform(_ work: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Work(work)).toOpaque()
        if mqueue_push(queue, 0, box) != 0 { Unmanaged<Work>.fromOpaque(box).release() }
    }

    /// Runs `work` on the loop thread and returns its result; called from any other thread.
    func run<Result: Sendable>(_ work: @escaping @Sendable () -> Result) -> Result {
        precondition(!isCurrent, "SIPLoop.run would wait for itself")
        let result = Locked<Result?>(nil)
        let done = DispatchSemaphore(value: 0)
        perform {
            let value = work()
            result.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }

    /// A unit of work on its way to the loop.
    final class Work {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}

/// libre's message queue handler: runs the work `perform` sent.
private func sipLoopMessage(_ id: Int32, _ data: UnsafeMutableRawPointer?, _ arg: UnsafeMutableRawPointer?) {
    guard let data else { return }
    Unmanaged<SIPLoop.Work>.fromOpaque(data).takeRetainedValue().body()
}
