import CLibre
import Foundation

/// Digest authentication of calls (RFC 3261 §22, MD5): the challenge a 401 carries, and the
/// check of an `Authorization` header, done by libre's `httpauth`. Nonces are stateless: the
/// time they were made and an HMAC of it under a secret of this process, valid for five minutes.
struct SIPDigest: Sendable {
    let credentials: SIPTrunkPolicy.Credentials
    private let secret: [UInt8] = (0..<32).map { _ in UInt8.random(in: 0...255) }
    /// How long a nonce is good for.
    static let nonceLifetime: TimeInterval = 300

    init(credentials: SIPTrunkPolicy.Credentials) {
        self.credentials = credentials
    }

    /// The `WWW-Authenticate` header line of a challenge.
    func challengeHeader(now: Date = Date()) -> String {
        "WWW-Authenticate: Digest realm=\"\(credentials.realm)\", nonce=\"\(nonce(issuedAt: UInt64(now.timeIntervalSince1970)))\", algorithm=MD5\r\n"
    }

    /// Whether `authorization` (the header's value) answers one of our challenges, with the
    /// configured username and password, for `method`.
    func verify(authorization: pl, method: pl, now: Date = Date()) -> Bool {
        var value = authorization
        var response = httpauth_digest_resp()
        guard httpauth_digest_response_decode(&response, &value) == 0,
              response.username.text == credentials.username, response.realm.text == credentials.realm,
              isFresh(response.nonce.text, now: now) else { return false }
        var ha1 = [UInt8](repeating: 0, count: 16)
        let secretText = Array("\(credentials.username):\(credentials.realm):\(credentials.password)".utf8)
        md5(secretText, secretText.count, &ha1)
        var method = method
        return httpauth_digest_response_auth(&response, &method, ha1) == 0
    }

    private func nonce(issuedAt seconds: UInt64) -> String {
        let time = String(seconds, radix: 16)
        return time + "." + signature(of: time)
    }

    private func isFresh(_ nonce: String, now: Date) -> Bool {
        let parts = nonce.split(separator: ".")
        guard parts.count == 2, let issued = UInt64(parts[0], radix: 16), signature(of: String(parts[0])) == parts[1] else { return false }
        let age = now.timeIntervalSince1970 - TimeInterval(issued)
        return age >= -5 && age <= Self.nonceLifetime
    }

    private func signature(of text: String) -> String {
        let data = Array(text.utf8)
        var digest = [UInt8](repeating: 0, count: 20)
        hmac_sha1(secret, secret.count, data, data.count, &digest, digest.count)
        return digest.map { String(format: "%02x", $0) }.joined()
    }
}
