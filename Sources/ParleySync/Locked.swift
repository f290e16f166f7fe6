#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a lock: every read and write goes through `withLock`.
///
/// The project's one lock. A bare `pthread_mutex_t`, for two reasons:
/// - ThreadSanitizer sees it. The standard library's `Mutex` hands a contended lock over
///   inside the kernel (a priority-inheriting futex), where the sanitizer cannot see it, so
///   every contended `Mutex` reads to it as a data race.
/// - It is cheap: this lock sits on the per-message path of every WebSocket, where `NSLock`'s
///   class call and the exclusivity check of a `var` cost as much as the mutex itself.
///
/// `@unchecked Sendable`: all access to `value` happens while holding `mutex`.
public final class Locked<Value>: @unchecked Sendable {
    @usableFromInline let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// Guarded by `mutex`, which already makes every access exclusive.
    @usableFromInline @exclusivity(unchecked) var value: Value

    /// Guards `value`.
    public init(_ value: Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable @inline(__always)
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
