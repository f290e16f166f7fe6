import Foundation

/// A gate tasks wait at until a test opens it: lets a test hold a provider mid-call without
/// sleeping, then release it. A cancelled task is let through at once.
public final class AsyncGate: @unchecked Sendable {
    // @unchecked Sendable: every stored property is guarded by `lock`.
    private let lock = NSLock()
    private var isOpen = false
    private var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    private var nextWaiter = 0
    private var arrivals = 0
    private var arrivalWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    /// Creates a closed gate.
    public init() {}

    /// The number of tasks that have arrived at the gate so far.
    public var arrivalCount: Int { lock.withLock { arrivals } }

    /// Waits until the gate is open (returns at once if it is, or if the task is cancelled).
    public func wait() async {
        let id = lock.withLock { () -> Int in
            nextWaiter += 1
            return nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let (pass, ready) = lock.withLock { () -> (Bool, [CheckedContinuation<Void, Never>]) in
                    arrivals += 1
                    let ready = arrivalWaiters.filter { $0.count <= arrivals }.map(\.continuation)
                    arrivalWaiters.removeAll { $0.count <= arrivals }
                    if isOpen || Task.isCancelled { return (true, ready) }
                    waiters[id] = continuation
                    return (false, ready)
                }
                ready.forEach { $0.resume() }
                if pass { continuation.resume() }
            }
        } onCancel: {
            lock.withLock { waiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// Waits until at least `count` tasks have arrived at the gate.
    public func waitForArrivals(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = lock.withLock { () -> Bool in
                if arrivals >= count { return true }
                arrivalWaiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Opens the gate and lets every waiting task through.
    public func open() {
        let released = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            isOpen = true
            defer { waiters.removeAll() }
            return Array(waiters.values)
        }
        released.forEach { $0.resume() }
    }
}
