import Foundation

/// Short client tokens for browsers.
///
/// Browsers can only send a credential inside the WebSocket subprotocol header, and
/// libwebsockets refuses that header from 127 bytes on, so a JWT (about 200 characters) does
/// not fit. A compact token carries the same kind of claims in 42 characters:
/// `pk_` + base64url(version, kind, expiry, nonce) + `.` + base64url(first 16 bytes of the
/// HMAC-SHA256 of those bytes under the server secret). Compact tokens are never scoped to an
/// agent or instance; scoped tokens are JWTs sent in the `Authorization` header.
enum CompactClientToken {
    static let prefix = "pk_"
    private static let version: UInt8 = 1
    private static let nonceLength = 6
    private static let tagLength = 16

    /// Who a compact token was minted for.
    enum Kind: UInt8 {
        case localUser = 1
        case client = 2

        var subject: String {
            switch self {
            case .localUser: "local-user"
            case .client: "client"
            }
        }
    }

    /// A compact token of `kind` that expires at `expiresAt` (seconds since 1970).
    static func mint(kind: Kind, expiresAt: Int, key: Data) -> String {
        var payload = Data([version, kind.rawValue])
        withUnsafeBytes(of: UInt32(clamping: expiresAt).bigEndian) { payload.append(contentsOf: $0) }
        payload.append(HMACSHA256.randomBytes(nonceLength))
        let tag = HMACSHA256.authenticationCode(for: payload, key: key).prefix(tagLength)
        return prefix + Base64URL.encode(payload) + "." + Base64URL.encode(tag)
    }

    /// The claims of a compact token whose tag and expiry check out.
    static func verify(_ token: String, key: Data, now: Date) throws(ClientTokenError) -> ClientTokenClaims {
        let body = token.dropFirst(prefix.count)
        let parts = body.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let payload = Base64URL.decode(parts[0]), let tag = Base64URL.decode(parts[1]),
              payload.count == 2 + 4 + nonceLength, tag.count == tagLength
        else { throw .malformed }
        let expected = HMACSHA256.authenticationCode(for: payload, key: key).prefix(tagLength)
        guard HMACSHA256.constantTimeEquals(Data(expected), tag) else { throw .badSignature }
        let bytes = [UInt8](payload)
        guard bytes[0] == version, let kind = Kind(rawValue: bytes[1]) else { throw .malformed }
        let expiresAt = Int(bytes[2...5].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        guard Double(expiresAt) > now.timeIntervalSince1970 else { throw .expired }
        return ClientTokenClaims(
            subject: kind.subject, expiresAt: expiresAt, issuedAt: 0, tokenID: Base64URL.encode(payload.suffix(nonceLength))
        )
    }
}
