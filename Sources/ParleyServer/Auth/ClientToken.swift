import Foundation

/// The claims of a short-lived client token (an HS256 JSON Web Token).
public struct ClientTokenClaims: Sendable, Hashable, Codable {
    /// The user the token was minted for (`sub`).
    public var subject: String
    /// The agent the token is limited to, or `nil` for any agent (`agent`).
    public var agentID: String?
    /// The instance the token is limited to, or `nil` (`instance`).
    public var instanceID: String?
    /// Expiry, seconds since 1970 (`exp`).
    public var expiresAt: Int
    /// Issue time, seconds since 1970 (`iat`).
    public var issuedAt: Int
    /// A unique id (`jti`).
    public var tokenID: String

    enum CodingKeys: String, CodingKey {
        case subject = "sub", agentID = "agent", instanceID = "instance", expiresAt = "exp", issuedAt = "iat", tokenID = "jti"
    }

    /// Creates claims.
    public init(subject: String, agentID: String? = nil, instanceID: String? = nil, expiresAt: Int, issuedAt: Int, tokenID: String) {
        self.subject = subject
        self.agentID = agentID
        self.instanceID = instanceID
        self.expiresAt = expiresAt
        self.issuedAt = issuedAt
        self.tokenID = tokenID
    }
}

/// Why a token was refused.
public enum ClientTokenError: Error, Sendable, Hashable, CustomStringConvertible {
    case malformed
    case unsupportedAlgorithm(String)
    case badSignature
    case expired
    case outOfScope

    public var description: String {
        switch self {
        case .malformed: "the token is not a well-formed JWT"
        case .unsupportedAlgorithm(let algorithm): "the token's algorithm \(algorithm) is not accepted (only HS256)"
        case .badSignature: "the token's signature does not match"
        case .expired: "the token has expired"
        case .outOfScope: "the token does not grant access to this agent or instance"
        }
    }
}

/// Mints and verifies client tokens with the server secret (HS256; only HS256 is accepted).
public struct ClientTokenAuthority: Sendable {
    /// The longest lifetime a token may have: 24 hours.
    public static let maximumLifetime: TimeInterval = 24 * 3600
    /// The lifetime of a token when none is asked for: 10 minutes.
    public static let defaultLifetime: TimeInterval = 600

    private let key: Data

    /// Creates an authority for `secret`.
    public init(secret: String) {
        key = Data(secret.utf8)
    }

    /// Mints a token for `subject`, limited to an agent and/or instance when given.
    /// The lifetime is clamped to 1 second … 24 hours.
    public func mint(
        subject: String, agentID: String? = nil, instanceID: String? = nil,
        lifetime: TimeInterval = defaultLifetime, now: Date = Date()
    ) -> (token: String, claims: ClientTokenClaims) {
        let issuedAt = Int(now.timeIntervalSince1970)
        let clamped = Int(min(max(lifetime, 1), Self.maximumLifetime))
        let claims = ClientTokenClaims(
            subject: subject, agentID: agentID, instanceID: instanceID,
            expiresAt: issuedAt + clamped, issuedAt: issuedAt,
            tokenID: Base64URL.encode(HMACSHA256.randomBytes(12))
        )
        let header = Base64URL.encode(Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let payload = Base64URL.encode((try? encoder.encode(claims)) ?? Data())
        let signingInput = "\(header).\(payload)"
        let signature = Base64URL.encode(HMACSHA256.authenticationCode(for: Data(signingInput.utf8), key: key))
        return ("\(signingInput).\(signature)", claims)
    }

    /// Mints a short, unscoped token for browsers, which must send it in the WebSocket
    /// subprotocol header (see `CompactClientToken`). The lifetime is clamped like `mint`'s.
    public func mintCompact(
        forLocalUser: Bool, lifetime: TimeInterval = defaultLifetime, now: Date = Date()
    ) -> (token: String, expiresAt: Int) {
        let expiresAt = Int(now.timeIntervalSince1970) + Int(min(max(lifetime, 1), Self.maximumLifetime))
        return (CompactClientToken.mint(kind: forLocalUser ? .localUser : .client, expiresAt: expiresAt, key: key), expiresAt)
    }

    /// Verifies a token's algorithm, signature and expiry and returns its claims; compact
    /// tokens (`pk_…`) and JWTs are both accepted.
    /// - Throws: `ClientTokenError`.
    public func verify(_ token: String, now: Date = Date()) throws(ClientTokenError) -> ClientTokenClaims {
        guard token.utf8.count <= 4096 else { throw .malformed }
        if token.hasPrefix(CompactClientToken.prefix) { return try CompactClientToken.verify(token, key: key, now: now) }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let headerData = Base64URL.decode(parts[0]),
              let header = try? JSONDecoder().decode([String: JSONScalar].self, from: headerData),
              let signature = Base64URL.decode(parts[2])
        else { throw .malformed }
        guard case .string(let algorithm)? = header["alg"] else { throw .malformed }
        guard algorithm == "HS256" else { throw .unsupportedAlgorithm(algorithm) }
        let expected = HMACSHA256.authenticationCode(for: Data("\(parts[0]).\(parts[1])".utf8), key: key)
        guard HMACSHA256.constantTimeEquals(signature, expected) else { throw .badSignature }
        guard let payload = Base64URL.decode(parts[1]),
              let claims = try? JSONDecoder().decode(ClientTokenClaims.self, from: payload)
        else { throw .malformed }
        guard Double(claims.expiresAt) > now.timeIntervalSince1970 else { throw .expired }
        return claims
    }
}

/// A JWT header value: only strings matter, anything else is kept opaque.
private enum JSONScalar: Decodable {
    case string(String)
    case other

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self = (try? container.decode(String.self)).map(JSONScalar.string) ?? .other
    }
}

extension ClientTokenClaims {
    /// Checks that these claims grant access to `agentID` and `instanceID`.
    /// A token without an agent (or instance) limit grants any.
    /// - Throws: `ClientTokenError.outOfScope`.
    public func checkScope(agentID: String?, instanceID: String?) throws(ClientTokenError) {
        if let limit = self.agentID, limit != agentID { throw .outOfScope }
        if let limit = self.instanceID, limit != instanceID { throw .outOfScope }
    }
}
