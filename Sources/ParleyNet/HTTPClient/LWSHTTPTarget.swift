import Foundation

/// Where a request on `LWSHTTPTransport` goes: the parts a connection and the request line need.
struct LWSHTTPTarget: Sendable, Hashable {
    /// The URL's host (an IPv6 address without brackets): the `Host` header, and the name TLS
    /// checks the certificate for.
    var host: String
    var port: Int
    /// The path and query of the request line.
    var pathAndQuery: String
    /// Whether the connection runs TLS (`https://`).
    var usesTLS: Bool
    /// The address to connect to, when it was resolved and checked beforehand; else lws
    /// resolves `host` itself.
    var address: IPAddress?

    /// Reads an `http://` URL, or an `https://` one when the request has a checked `address`
    /// (other `https://` requests go over URLSession).
    /// - Throws: `HTTPClientError` `.invalidRequest` for another scheme or a URL without a host.
    init(_ url: URL, address: IPAddress?) throws(HTTPClientError) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https" && address != nil,
              let host = components.host, !host.isEmpty else {
            throw HTTPClientError(.invalidRequest, message: "not an http URL with a host: \(url.absoluteString)")
        }
        // URLComponents keeps an IPv6 address's brackets.
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        usesTLS = scheme == "https"
        self.address = address
        port = components.port ?? (usesTLS ? 443 : 80)
        guard (1...65_535).contains(port) else { throw HTTPClientError(.invalidRequest, message: "invalid port in \(url.absoluteString)") }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        pathAndQuery = components.percentEncodedQuery.map { "\(path)?\($0)" } ?? path
    }

    /// The host or address a connection is made to.
    var connectHost: String { address?.description ?? host }

    /// Connections to the same key can carry each other's requests: same scheme, host, port,
    /// and checked address.
    var connectionKey: String {
        (usesTLS ? "https://" : "") + "\(host):\(port)" + (address.map { " at \($0)" } ?? "")
    }

    /// The `Host` header value.
    var hostHeader: String {
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return port == (usesTLS ? 443 : 80) ? bracketed : "\(bracketed):\(port)"
    }
}
