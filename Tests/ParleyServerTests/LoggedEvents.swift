import Foundation
import ParleyCore
import ParleyServer

/// The lines an `EventLog` wrote, parsed, so that a test can await the one it expects with a
/// deadline. `@unchecked Sendable`: `written`, `lines` and `waiters` are guarded by `lock`.
final class LoggedEvents: @unchecked Sendable {
    private struct Waiter {
        var event: String
        var continuation: CheckedContinuation<JSONValue?, Never>
    }

    private let lock = NSLock()
    private var written: [String] = []
    private var lines: [JSONValue] = []
    private var waiters: [UUID: Waiter] = [:]

    /// The log that writes here.
    var log: EventLog {
        EventLog { [self] text in
            lock.withLock { written.append(text) }
            guard let line = try? JSONValue(parsing: text) else { return }
            let satisfied: [Waiter] = lock.withLock {
                lines.append(line)
                let ids = waiters.filter { $0.value.event == line["event"]?.stringValue }.map(\.key)
                return ids.compactMap { waiters.removeValue(forKey: $0) }
            }
            for waiter in satisfied { waiter.continuation.resume(returning: line) }
        }
    }

    /// Every line so far whose event is `name`.
    func events(_ name: String) -> [JSONValue] { lock.withLock { lines.filter { $0["event"]?.stringValue == name } } }

    /// Every line so far, as the log wrote it.
    var texts: [String] { lock.withLock { written } }

    /// The first line whose event is `name`, waiting for it at most `seconds`; `nil` if none came.
    func first(_ name: String, within seconds: Double) async -> JSONValue? {
        let id = UUID()
        return await withCheckedContinuation { continuation in
            let found: JSONValue?? = lock.withLock {
                if let line = lines.first(where: { $0["event"]?.stringValue == name }) { return .some(line) }
                waiters[id] = Waiter(event: name, continuation: continuation)
                return .none
            }
            if let found {
                continuation.resume(returning: found)
                return
            }
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                lock.withLock { waiters.removeValue(forKey: id) }?.continuation.resume(returning: nil)
            }
        }
    }
}
