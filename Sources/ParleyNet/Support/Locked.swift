#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a lock: every read and write goes through `withLock`.
///
/// A bare `pthread_mutex_t` rather than `NSLock`: this lock sits on the per-message path of
/// every WebSocket, where the class call and the exclusivity check of a `var` cost as much as
/// the mutex itself.
///
/// `@unchecked Sendable`: all access to `value` happens while holding `mutex`.
final class Locked<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// Guarded by `mutex`, which already makes every access exclusive.
    @exclusivity(unchecked) private var value: Value

    init(_ value: Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    @inline(__always)
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
