import Foundation

/// A client token for the realtime endpoint, as an app's backend (or the local server) hands it out.
public struct RealtimeToken: Sendable, Hashable {
    /// The bearer token.
    public var value: String
    /// When it stops working; `nil` when unknown (it is then fetched anew for every connection).
    public var expiresAt: Date?

    /// Creates a token.
    public init(value: String, expiresAt: Date? = nil) {
        self.value = value
        self.expiresAt = expiresAt
    }

    /// Whether the token can still be used for a connection that starts now, keeping `margin`
    /// in hand.
    public func isUsable(now: Date = Date(), margin: TimeInterval) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt.timeIntervalSince(now) > margin
    }
}
