import Foundation

extension HTTPClient {
    /// Sends a request under its outbound policy. The host is resolved here and every address it
    /// has is checked; the connection then goes to a checked address (the first that accepts it)
    /// with the URL's host in `Host` and, for `https://`, in SNI and the certificate check, so a
    /// name that resolves differently a moment later changes nothing. Both schemes run on
    /// libwebsockets for that: URLSession resolves names itself and cannot be handed an address.
    /// A redirect is followed only on the host first checked, whose addresses are resolved and
    /// checked again for every hop.
    /// - Throws: `HTTPClientError` `.addressRefused` or `.redirectRefused`, or what `stream` throws.
    func streamFenced(_ request: Request, policy: OutboundPolicy) async throws -> StreamingResponse {
        guard let scheme = request.url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = request.url.host?.lowercased(), !host.isEmpty else {
            throw HTTPClientError(.invalidRequest, message: "not an http(s) URL with a host: \(request.url.absoluteString)")
        }
        var current = request
        for _ in 0..<Request.maximumRedirects {
            let addresses = try await policy.checkedAddresses(forHost: host)
            let response = try await sendToFirstReachable(current, addresses)
            guard let next = current.redirected(status: response.status, location: response.headers["location"]) else { return response }
            // The redirect's own body is dropped, which ends its exchange. Where it pointed is the
            // far side's answer, so the error does not repeat it.
            guard next.url.host?.lowercased() == host else {
                throw HTTPClientError(.redirectRefused, message: "\(host) redirected to another host, which is not followed")
            }
            current = next
        }
        throw HTTPClientError(.other, message: "more than \(Request.maximumRedirects) redirects from \(request.url.absoluteString)")
    }

    /// Sends `request` to the first of `addresses` that a connection can be made to (a name
    /// often has an IPv6 and an IPv4 address, and a server may listen on one of them only).
    func sendToFirstReachable(_ request: Request, _ addresses: [IPAddress]) async throws -> StreamingResponse {
        var lastFailure: HTTPClientError?
        for address in addresses {
            do {
                return try await sendOverLWS(request, connectingTo: address)
            } catch let error as HTTPClientError where error.kind == .connectionFailed {
                // Nothing of the request was sent: the next address may take it.
                lastFailure = error
            }
        }
        throw lastFailure ?? HTTPClientError(.connectionFailed, message: "\(request.url.host ?? "the host") has no address")
    }
}
