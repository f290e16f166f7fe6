import Dispatch
import Foundation

/// Waits for SIGINT or SIGTERM, handled through dispatch sources (no C signal handler).
enum ShutdownSignal {
    /// Returns when the process receives SIGINT or SIGTERM.
    static func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let queue = DispatchQueue(label: "parley.signals")
            let resumed = ResumeOnce(continuation)
            var sources: [DispatchSourceSignal] = []
            for signalNumber in [SIGINT, SIGTERM] {
                signal(signalNumber, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
                source.setEventHandler { resumed.resume() }
                source.resume()
                sources.append(source)
            }
            resumed.keepAlive(sources)
        }
    }
}

/// Resumes a continuation once and keeps the signal sources alive until then.
///
/// `@unchecked Sendable`: every stored property is guarded by `lock`.
private final class ResumeOnce: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Void, Never>?
    private var sources: [DispatchSourceSignal] = []

    init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = continuation }

    func keepAlive(_ sources: [DispatchSourceSignal]) { lock.withLock { self.sources = sources } }

    func resume() {
        let pending = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            defer { continuation = nil; sources.forEach { $0.cancel() }; sources = [] }
            return continuation
        }
        pending?.resume()
    }
}
