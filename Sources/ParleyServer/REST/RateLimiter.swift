import Foundation

/// A token bucket per client address: at most `perMinute` actions a minute, refilled evenly.
///
/// `@unchecked Sendable`: `buckets` is guarded by `lock`.
public final class RateLimiter: @unchecked Sendable {
    private struct Bucket { var tokens: Double; var updated: Date }
    private let lock = NSLock()
    private var buckets: [String: Bucket] = [:]
    private let perMinute: Double

    /// Creates a limiter allowing `perMinute` actions per minute per key.
    public init(perMinute: Int) { self.perMinute = Double(max(perMinute, 1)) }

    /// Takes one token for `key`; `false` when the key is over its limit.
    public func allow(_ key: String, now: Date = Date()) -> Bool {
        lock.withLock {
            var bucket = buckets[key] ?? Bucket(tokens: perMinute, updated: now)
            bucket.tokens = min(perMinute, bucket.tokens + now.timeIntervalSince(bucket.updated) * perMinute / 60)
            bucket.updated = now
            let allowed = bucket.tokens >= 1
            if allowed { bucket.tokens -= 1 }
            buckets[key] = bucket
            if buckets.count > 10_000 { buckets = buckets.filter { $0.value.tokens < perMinute } }
            return allowed
        }
    }
}
