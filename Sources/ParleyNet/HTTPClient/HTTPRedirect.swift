import Foundation

extension HTTPClient.Request {
    /// The most redirects followed for one request.
    static let maximumRedirects = 10

    /// The request that follows a redirect response, as browsers and URLSession do it: 303
    /// (and 301 or 302 after a POST) becomes a GET without a body, 307 and 308 repeat the
    /// method and body; credentials are not sent to another origin. `nil` when `status` is no
    /// redirect or `location` is not an http(s) URL.
    func redirected(status: Int, location: String?) -> HTTPClient.Request? {
        guard [301, 302, 303, 307, 308].contains(status), let location,
              let target = URL(string: location, relativeTo: url)?.absoluteURL,
              let scheme = target.scheme?.lowercased(), ["http", "https"].contains(scheme), target.host != nil else { return nil }
        var next = self
        next.url = target
        let upperMethod = method.uppercased()
        if status == 303 && upperMethod != "HEAD" || (status == 301 || status == 302) && upperMethod == "POST" {
            next.method = "GET"
            next.body = nil
            next.headers = next.headers.filter { !["content-type", "content-length"].contains($0.key.lowercased()) }
        }
        let sameOrigin = target.scheme?.lowercased() == url.scheme?.lowercased()
            && target.host?.lowercased() == url.host?.lowercased() && target.port == url.port
        if !sameOrigin {
            next.headers = next.headers.filter { !["authorization", "cookie"].contains($0.key.lowercased()) }
        }
        return next
    }
}
