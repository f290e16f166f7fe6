import Foundation

/// How the server answers phone calls: Twilio's auth token and the public URL Twilio reaches
/// the server at.
public struct TelephonySettings: Sendable, Hashable {
    /// The Twilio account's auth token (`PARLEY_TWILIO_AUTH_TOKEN`). When set, every call
    /// webhook must carry a valid `X-Twilio-Signature`; when not, every call is refused.
    public var twilioAuthToken: String?
    /// The `https://` URL Twilio reaches this server at (`PARLEY_PUBLIC_URL`), for example a
    /// tunnel or reverse proxy in front of the loopback port. Signatures are computed over it
    /// and the media stream URL is derived from it; without it, the request's `Host` is used.
    public var publicURL: URL?
    /// How long the media stream token a call webhook hands out stays valid.
    public var streamTokenLifetime: Duration = .seconds(60)
    /// How long a media stream may take to send its `start` message before it is closed.
    public var streamStartTimeout: Duration = .seconds(10)

    /// Creates settings with no auth token and no public URL.
    public init() {}

    /// Reads `PARLEY_TWILIO_AUTH_TOKEN` and `PARLEY_PUBLIC_URL` through `value`.
    static func load(_ value: (String) -> String?, problems: inout [String]) -> TelephonySettings {
        var settings = TelephonySettings()
        settings.twilioAuthToken = value("PARLEY_TWILIO_AUTH_TOKEN")
        if let raw = value("PARLEY_PUBLIC_URL") {
            if let url = URL(string: raw), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil {
                settings.publicURL = url
            } else {
                problems.append("PARLEY_PUBLIC_URL: \"\(raw)\" is not an http(s) URL such as https://voice.example.com")
            }
        }
        return settings
    }

    /// The public base URL without a trailing slash, when one is configured.
    var publicBase: String? {
        publicURL.map { url in
            var text = url.absoluteString
            while text.hasSuffix("/") { text.removeLast() }
            return text
        }
    }
}
