import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An HTTP/1.1 client that streams response bodies as they arrive.
///
/// `http://` requests go over libwebsockets (`LWSHTTPTransport`): one network thread for the
/// process, keep-alive connections pooled per host, chunked and streamed bodies. `https://`
/// requests go over URLSession, where a `URLSessionDataDelegate` feeds each response into an
/// `AsyncThrowingStream` (Linux has no `URLSession.bytes(for:)`). Either way, cancelling the
/// calling task, or dropping or cancelling the iteration of a streaming body, ends the transfer
/// and closes its connection.
///
/// A request with an `outboundPolicy` goes over libwebsockets whatever its scheme (TLS included),
/// connecting to an address the client resolved and checked itself (see `Request.outboundPolicy`).
///
/// ```swift
/// let response = try await HTTPClient.shared.stream(.init(url: url, method: "POST", body: json))
/// var parser = ServerSentEventParser()
/// for try await piece in response.body { for event in try parser.push(piece) { … } }
/// ```
public final class HTTPClient: Sendable {
    /// A client shared by everything in the process that has no reason to own one.
    public static let shared = HTTPClient()

    private let session: URLSession
    private let delegate: HTTPClientSessionDelegate
    /// The PEM file of certificate authorities `https://` requests on libwebsockets also trust.
    let additionalTrustedCertificates: String?

    /// Creates a client; its `https://` requests have their own URLSession connection pool.
    /// - Parameters:
    ///   - maximumConnectionsPerHost: the most connections URLSession keeps open to one
    ///     `https://` host (`http://` requests share the process-wide pool, which never makes a
    ///     request wait for another).
    ///   - additionalTrustedCertificates: a PEM file of certificate authorities that
    ///     `https://` requests with an outbound policy trust besides the system's (a test's
    ///     own authority); URLSession's requests trust the system's only.
    public init(maximumConnectionsPerHost: Int = 32, additionalTrustedCertificates: String? = nil) {
        self.additionalTrustedCertificates = additionalTrustedCertificates
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = maximumConnectionsPerHost
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.timeoutIntervalForResource = 24 * 60 * 60
        let delegate = HTTPClientSessionDelegate()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "parley.http-client"
        self.delegate = delegate
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
    }

    deinit {
        session.invalidateAndCancel()
    }

    /// Sends `request` and returns once the response head has arrived; the body streams after.
    /// - Throws: `HTTPClientError` when no response arrives; `CancellationError` when cancelled.
    public func stream(_ request: Request) async throws -> StreamingResponse {
        if let policy = request.outboundPolicy { return try await streamFenced(request, policy: policy) }
        if request.url.scheme?.lowercased() == "http" { return try await streamPlain(request) }
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        urlRequest.timeoutInterval = max(0.001, Double(request.idleTimeout.components.seconds) + Double(request.idleTimeout.components.attoseconds) / 1e18)

        let (body, bodyContinuation) = AsyncThrowingStream.makeStream(
            of: Data.self,
            // The consumer drains pieces as the network delivers them; memory follows its pace.
            bufferingPolicy: .unbounded
        )
        let exchange = HTTPClientExchange(task: session.dataTask(with: urlRequest), body: bodyContinuation)
        bodyContinuation.onTermination = { [exchange] termination in
            if case .cancelled = termination { exchange.cancel() }
        }
        let head = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                exchange.start(delegate: delegate, head: continuation)
            }
        } onCancel: {
            exchange.cancel()
        }
        var headers: [String: String] = [:]
        for (name, value) in head.allHeaderFields {
            headers[String(describing: name).lowercased()] = String(describing: value)
        }
        return StreamingResponse(status: head.statusCode, headers: headers, body: body)
    }

    /// Sends an `http://` request over the libwebsockets transport, following redirects
    /// (URLSession follows them for `https://`).
    private func streamPlain(_ request: Request) async throws -> StreamingResponse {
        var current = request
        for _ in 0..<Request.maximumRedirects {
            let response = try await sendOverLWS(current)
            guard let next = current.redirected(status: response.status, location: response.headers["location"]) else { return response }
            // The redirect's own body is dropped, which ends its exchange.
            if next.url.scheme?.lowercased() != "http" { return try await stream(next) }
            current = next
        }
        throw HTTPClientError(.other, message: "more than \(Request.maximumRedirects) redirects from \(request.url.absoluteString)")
    }

    /// Sends one request over the libwebsockets transport: an `http://` one, or with `address`
    /// (checked, and connected to instead of resolving the host) an `https://` one too.
    func sendOverLWS(_ request: Request, connectingTo address: IPAddress? = nil) async throws -> StreamingResponse {
        let transport = try LWSHTTPTransport.shared()
        let (body, bodyContinuation) = AsyncThrowingStream.makeStream(
            of: Data.self,
            // The consumer drains pieces as the network delivers them; memory follows its pace.
            bufferingPolicy: .unbounded
        )
        let exchange = try LWSHTTPExchange(
            request, address: address, additionalTrust: additionalTrustedCertificates, body: bodyContinuation
        )
        bodyContinuation.onTermination = { [exchange] termination in
            if case .cancelled = termination { transport.cancel(exchange) }
        }
        let head = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if exchange.awaitHead(continuation) { transport.start(exchange) }
            }
        } onCancel: {
            transport.cancel(exchange)
        }
        return StreamingResponse(status: head.status, headers: head.headers, body: body)
    }

    /// Sends `request` and reads the whole response.
    /// - Parameter maxBodyBytes: the most body bytes to accept.
    /// - Throws: `HTTPClientError` (also `.responseTooLarge`); `CancellationError` when cancelled.
    public func send(_ request: Request, maxBodyBytes: Int = 16 << 20) async throws -> Response {
        let response = try await stream(request)
        let body = try await response.collectBody(upTo: maxBodyBytes)
        return Response(status: response.status, headers: response.headers, body: body)
    }
}

