import COpenSSL
import Foundation

/// Twilio's request signature, `X-Twilio-Signature`: HMAC-SHA1, keyed with the account's auth
/// token, over the full URL Twilio requested followed by every POST parameter's name and value
/// sorted by name, base64-encoded.
enum TwilioSignature {
    /// The signature Twilio sends for a request to `url` with `parameters`.
    static func expected(url: String, parameters: [(name: String, value: String)], authToken: String) -> String {
        // Sorted by name as bytes (case-sensitive); a name given twice keeps its order.
        let sorted = parameters.enumerated().sorted { left, right in
            left.element.name.utf8.lexicographicallyPrecedes(right.element.name.utf8)
                || left.element.name == right.element.name && left.offset < right.offset
        }
        let message = sorted.reduce(into: url) { text, pair in text += pair.element.name + pair.element.value }
        return authenticationCode(for: Data(message.utf8), key: Data(authToken.utf8)).base64EncodedString()
    }

    /// Whether `signature` is the one Twilio would send for this request (compared in constant time).
    static func isValid(_ signature: String, url: String, parameters: [(name: String, value: String)], authToken: String) -> Bool {
        let expected = expected(url: url, parameters: parameters, authToken: authToken)
        return HMACSHA256.constantTimeEquals(Data(signature.utf8), Data(expected.utf8))
    }

    /// The 20-byte HMAC-SHA1 of `message` under `key`, from OpenSSL's libcrypto.
    private static func authenticationCode(for message: Data, key: Data) -> Data {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        key.withUnsafeBytes { keyBytes in
            message.withUnsafeBytes { messageBytes in
                _ = HMAC(
                    EVP_sha1(), keyBytes.baseAddress, Int32(keyBytes.count),
                    messageBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), messageBytes.count,
                    &output, &length
                )
            }
        }
        return Data(output.prefix(Int(length)))
    }
}
