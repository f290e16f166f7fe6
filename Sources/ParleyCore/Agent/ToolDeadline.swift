import Foundation

/// Runs a tool with a deadline, and stops waiting at the deadline even when the tool ignores
/// cancellation (the tool is cancelled and left to wind down on its own).
enum ToolDeadline {
    /// The deadline passed before the tool finished.
    struct Expired: Error {}

    /// Runs `operation`, throwing `Expired` after `timeout` and `CancellationError` when the
    /// calling task is cancelled, whichever comes first.
    static func run(
        timeout: Duration,
        clock: any Clock<Duration>,
        operation: @escaping @Sendable () async throws -> String
    ) async throws -> String {
        let race = Race()
        let work = Task {
            do { race.finish(.success(try await operation())) } catch { race.finish(.failure(error)) }
        }
        let timer = Task {
            do {
                try await clock.sleep(for: timeout)
                race.finish(.failure(Expired()))
            } catch {}
        }
        defer {
            work.cancel()
            timer.cancel()
        }
        return try await withTaskCancellationHandler {
            try await race.outcome()
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
    }

    /// The first result wins; the waiter is resumed exactly once.
    private final class Race: @unchecked Sendable {  // `lock` guards `result`, `waiter`, `isSettled`.
        private let lock = NSLock()
        private var result: Result<String, any Error>?
        private var waiter: CheckedContinuation<String, any Error>?
        private var isSettled = false

        func finish(_ outcome: Result<String, any Error>) {
            lock.lock()
            guard !isSettled, result == nil else {
                lock.unlock()
                return
            }
            if let waiter {
                self.waiter = nil
                isSettled = true
                lock.unlock()
                waiter.resume(with: outcome)
            } else {
                result = outcome
                lock.unlock()
            }
        }

        func outcome() async throws -> String {
            try await withCheckedThrowingContinuation { continuation in
                lock.lock()
                if let result {
                    isSettled = true
                    lock.unlock()
                    continuation.resume(with: result)
                } else {
                    waiter = continuation
                    lock.unlock()
                }
            }
        }
    }
}
