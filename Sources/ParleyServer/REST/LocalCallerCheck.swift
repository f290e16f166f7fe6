import Foundation
import ParleyNet

/// Decides whether a request for a local token (`POST /v1/local/token`) comes from the person
/// at this machine, and not from the internet through a tunnel or proxy, nor from a page of
/// another origin (including a DNS-rebinding one).
///
/// Every condition must hold: the server listens on loopback only and names no public URL
/// (`PARLEY_PUBLIC_URL`), the peer is a loopback address, `Host` names a loopback address, an
/// `Origin`, when present, is this very origin (`http://` or `https://` followed by the `Host`),
/// and no proxy header (`Forwarded`, `X-Forwarded-*`, `X-Real-IP`) is present.
struct LocalCallerCheck {
    /// Why a request was refused: a stable code for metrics and a sentence for the caller.
    struct Refusal: Error, Equatable {
        var reason: String
        var message: String
    }

    /// Whether the server's settings allow local tokens at all.
    var serverIsLocal: Bool
    /// Whether a public URL is configured (the server is reached from elsewhere).
    var hasPublicURL: Bool

    /// The check for `settings`.
    init(settings: ServerSettings) {
        serverIsLocal = settings.localTokensEnabled
        hasPublicURL = settings.telephony.publicURL != nil
    }

    /// The reason to refuse `request`, or nil when it comes from the local user.
    func refusal(of request: HTTPRequest) -> Refusal? {
        guard serverIsLocal else {
            return Refusal(reason: "server_not_local", message: "Local tokens are off on this server; get a client token from your app's backend.")
        }
        guard !hasPublicURL else {
            return Refusal(reason: "public_url", message: "Local tokens are off because PARLEY_PUBLIC_URL is set; get a client token from your app's backend.")
        }
        guard Self.isLoopbackAddress(request.remoteAddress) else {
            return Refusal(reason: "remote_peer", message: "Local tokens are only for callers on this machine.")
        }
        let proxyHeaders = request.headers.map(\.name).filter { name in
            let lowered = name.lowercased()
            return lowered == "forwarded" || lowered.hasPrefix("x-forwarded-") || lowered == "x-real-ip"
        }
        guard proxyHeaders.isEmpty else {
            return Refusal(reason: "proxied", message: "Local tokens are not given through a proxy (the request carries \(proxyHeaders.sorted().joined(separator: ", "))).")
        }
        guard let host = request.headers["Host"], Self.isLoopbackHost(host) else {
            return Refusal(reason: "foreign_host", message: "Local tokens are only given to pages served from a loopback address (Host is not one).")
        }
        if let origin = request.headers["Origin"], origin != "http://\(host)", origin != "https://\(host)" {
            return Refusal(reason: "foreign_origin", message: "Local tokens are only given to this server's own page (Origin \(origin.prefix(100)) is another).")
        }
        return nil
    }

    /// Whether `address` (a peer's IP) is a loopback address.
    static func isLoopbackAddress(_ address: String) -> Bool {
        let plain = address.hasPrefix("::ffff:") ? String(address.dropFirst(7)) : address
        return plain == "::1" || plain.split(separator: ".").first == "127" && plain.split(separator: ".").count == 4
    }

    /// Whether a `Host` header (`name[:port]`, `[v6]:port`) names a loopback address.
    static func isLoopbackHost(_ host: String) -> Bool {
        let name: String
        if host.hasPrefix("[") {
            guard let end = host.firstIndex(of: "]") else { return false }
            name = String(host[host.index(after: host.startIndex)..<end])
        } else {
            name = String(host.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        }
        return name.lowercased() == "localhost" || isLoopbackAddress(name)
    }
}
