import Foundation

/// `application/x-www-form-urlencoded` bodies, as Twilio posts its call webhooks.
enum FormURLEncoded {
    /// The name–value pairs of `body`, in order: `+` is a space and `%XX` a byte; a malformed
    /// escape is kept as written (Twilio signs the decoded values).
    static func parameters(_ body: Data) -> [(name: String, value: String)] {
        String(decoding: body, as: UTF8.self).split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    private static func decode(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}
