import Foundation
import ParleyServer

/// The secret the seed tokens are signed with; the fuzzer never sees it.
private let authority = ClientTokenAuthority(secret: "parley-fuzz-secret-0123456789abcdef")
/// A fixed "now" so the seed tokens never expire (2025-01-01).
private let now = Date(timeIntervalSince1970: 1_735_689_600)

/// libFuzzer entry: verifies the input as a client token (a JWT, or a compact `pk_…` token).
/// A token that verifies must be exactly the canonical encoding of what it carries (no
/// malleable signature or padding) and must not be expired.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJWTVerifier(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let token = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    guard let claims = try? authority.verify(token, now: now) else { return 0 }
    fuzzCheck(Double(claims.expiresAt) > now.timeIntervalSince1970, "an expired token verified")
    let encoded = token.hasPrefix("pk_") ? token.dropFirst(3) : Substring(token)
    for part in encoded.split(separator: ".", omittingEmptySubsequences: false) {
        let decoded = Data(base64Encoded: base64(part))
        fuzzCheck(decoded.map(base64URL) == String(part), "a non-canonical token verified: \(token)")
    }
    return 0
}

private func base64(_ part: Substring) -> String {
    var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    text += String(repeating: "=", count: (4 - text.count % 4) % 4)
    return text
}

private func base64URL(_ data: Data) -> String {
    data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}
