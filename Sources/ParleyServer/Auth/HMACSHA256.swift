import COpenSSL
import Foundation

/// HMAC-SHA256 (or another digest's HMAC) and constant-time comparison from OpenSSL's libcrypto.
enum HMACSHA256 {
    /// The HMAC of `message` under `key`: 32 bytes with SHA-256, or `digest`'s length (an
    /// OpenSSL `EVP_MD`, such as `EVP_sha1()`).
    static func authenticationCode(for message: Data, key: Data, digest: OpaquePointer = EVP_sha256()) -> Data {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        key.withUnsafeBytes { keyBytes in
            message.withUnsafeBytes { messageBytes in
                _ = HMAC(
                    digest, keyBytes.baseAddress, Int32(keyBytes.count),
                    messageBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), messageBytes.count,
                    &output, &length
                )
            }
        }
        return Data(output.prefix(Int(length)))
    }

    /// Compares two byte strings in time that depends only on their length.
    static func constantTimeEquals(_ lhs: Data, _ rhs: Data) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.withUnsafeBytes { left in
            rhs.withUnsafeBytes { right in
                CRYPTO_memcmp(left.baseAddress, right.baseAddress, lhs.count) == 0
            }
        }
    }

    /// `count` cryptographically random bytes.
    static func randomBytes(_ count: Int) -> Data {
        var bytes = [UInt8](repeating: 0, count: count)
        precondition(RAND_bytes(&bytes, Int32(count)) == 1, "OpenSSL's random generator failed")
        return Data(bytes)
    }
}
