/// How many new calls (INVITEs) each source address may start: a token bucket per address,
/// refilled at `perSecond` up to a burst of twice that. What is over the budget is refused with
/// `503` and `Retry-After`, so a flood costs the door one reply per packet, not a call.
public struct SIPInviteBudget: Sendable {
    /// INVITEs a second each address may send, on average.
    public let perSecond: Double
    private var buckets: [String: Bucket] = [:]

    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    /// Addresses remembered at most; beyond it, the full buckets are forgotten (they start full again anyway).
    static let maximumAddresses = 10_000

    /// A budget of `perSecond` INVITEs a second per address (at least 1).
    public init(perSecond: Int) {
        self.perSecond = Double(max(perSecond, 1))
    }

    /// The burst an address may send at once.
    public var burst: Double { perSecond * 2 }

    /// Takes one INVITE from `source` at `now`; `false` when the address is over its budget.
    public mutating func take(from source: String, now: ContinuousClock.Instant) -> Bool {
        var bucket = buckets[source] ?? Bucket(tokens: burst, updated: now)
        let elapsed = now - bucket.updated
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        bucket.tokens = min(burst, bucket.tokens + max(0, seconds) * perSecond)
        bucket.updated = now
        let allowed = bucket.tokens >= 1
        if allowed { bucket.tokens -= 1 }
        buckets[source] = bucket
        if buckets.count > Self.maximumAddresses { buckets = buckets.filter { $0.value.tokens < burst } }
        return allowed
    }
}
