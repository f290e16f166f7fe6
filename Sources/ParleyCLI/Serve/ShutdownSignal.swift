import Dispatch
import Foundation

/// Catches SIGINT and SIGTERM through dispatch sources (no C signal handler) from the moment
/// it is made, so a signal that comes before `wait()` (while the server starts) is kept, not
/// fatal.
final class ShutdownSignal: @unchecked Sendable {
    // @unchecked Sendable: `received` and `continuation` are guarded by `lock`; `sources` is
    // set once in init.
    private let lock = NSLock()
    private var received = false
    private var continuation: CheckedContinuation<Void, Never>?
    private var sources: [DispatchSourceSignal] = []

    /// Starts catching SIGINT and SIGTERM.
    init() {
        let queue = DispatchQueue(label: "parley.signals")
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            source.setEventHandler { [weak self] in self?.receive() }
            source.resume()
            sources.append(source)
        }
    }

    deinit {
        sources.forEach { $0.cancel() }
    }

    /// Returns once the process has received SIGINT or SIGTERM (at once if it already has).
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let alreadyReceived = lock.withLock {
                if !received { self.continuation = continuation }
                return received
            }
            if alreadyReceived { continuation.resume() }
        }
    }

    private func receive() {
        let waiting = lock.withLock {
            received = true
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume()
    }
}
