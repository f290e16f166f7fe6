import COpenSSL
import Foundation

/// Twilio's request signature, `X-Twilio-Signature`: HMAC-SHA1, keyed with the account's auth
/// token, over the full URL Twilio requested followed by every POST parameter's name and value
/// sorted by name, base64-encoded. Public so that a backend, a benchmark or a test can sign
/// requests the way Twilio does.
public enum TwilioSignature {
    /// The signature Twilio sends for a request to `url` with `parameters`.
    public static func expected(url: String, parameters: [(name: String, value: String)], authToken: String) -> String {
        // Sorted by name as bytes (case-sensitive); a name given twice keeps its order.
        let sorted = parameters.enumerated().sorted { left, right in
            left.element.name.utf8.lexicographicallyPrecedes(right.element.name.utf8)
                || left.element.name == right.element.name && left.offset < right.offset
        }
        let message = sorted.reduce(into: url) { text, pair in text += pair.element.name + pair.element.value }
        return HMACSHA256.authenticationCode(for: Data(message.utf8), key: Data(authToken.utf8), digest: EVP_sha1()).base64EncodedString()
    }

    /// Whether `signature` is the one Twilio would send for this request (compared in constant time).
    static func isValid(_ signature: String, url: String, parameters: [(name: String, value: String)], authToken: String) -> Bool {
        let expected = expected(url: url, parameters: parameters, authToken: authToken)
        return HMACSHA256.constantTimeEquals(Data(signature.utf8), Data(expected.utf8))
    }
}
