import Foundation

/// Tokens for the operator console (`/console` and `/v1/console/…`), minted by
/// `parley console-token` from the server secret so an operator need not paste the secret
/// into a browser.
///
/// `pc_<expiry>.<nonce>.<tag>`: the expiry in seconds since 1970, a random nonce, and the
/// HMAC-SHA256 under the server secret of a message no client token ever signs (it names the
/// console), so a console token opens no other route and a client token never opens the console.
public enum ConsoleToken {
    static let prefix = "pc_"
    /// The longest lifetime a console token may have: 7 days.
    public static let maximumLifetime: TimeInterval = 7 * 24 * 3600
    /// The lifetime of a console token when none is asked for: 12 hours.
    public static let defaultLifetime: TimeInterval = 12 * 3600

    /// Mints a console token that expires `lifetime` from `now` (clamped to 1 second … 7 days).
    /// - Returns: the token and its expiry (seconds since 1970).
    public static func mint(secret: String, lifetime: TimeInterval = defaultLifetime, now: Date = Date()) -> (token: String, expiresAt: Int) {
        let expiresAt = Int(now.timeIntervalSince1970) + Int(min(max(lifetime, 1), maximumLifetime))
        let nonce = Base64URL.encode(HMACSHA256.randomBytes(9))
        return (prefix + "\(expiresAt).\(nonce)." + Base64URL.encode(tag(expiresAt: expiresAt, nonce: nonce, secret: secret)), expiresAt)
    }

    /// Whether `token` is a console token of this server that has not expired.
    public static func isValid(_ token: String, secret: String, now: Date = Date()) -> Bool {
        guard token.hasPrefix(prefix), token.utf8.count <= 200 else { return false }
        let parts = token.dropFirst(prefix.count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let expiresAt = Int(parts[0]), let tag = Base64URL.decode(parts[2]) else { return false }
        let expected = Self.tag(expiresAt: expiresAt, nonce: String(parts[1]), secret: secret)
        return HMACSHA256.constantTimeEquals(tag, expected) && Double(expiresAt) > now.timeIntervalSince1970
    }

    private static func tag(expiresAt: Int, nonce: String, secret: String) -> Data {
        HMACSHA256.authenticationCode(for: Data("parley console token|\(expiresAt)|\(nonce)".utf8), key: Data(secret.utf8))
    }
}
