import Foundation

/// Where a plain-HTTP request goes: the parts a connection and the request line need.
struct LWSHTTPTarget: Sendable, Hashable {
    /// The host to connect to (an IPv6 address without brackets).
    var host: String
    var port: Int
    /// The path and query of the request line.
    var pathAndQuery: String

    /// Reads an `http://` URL.
    /// - Throws: `HTTPClientError` `.invalidRequest` for another scheme or a URL without a host.
    init(_ url: URL) throws(HTTPClientError) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              components.scheme?.lowercased() == "http", let host = components.host, !host.isEmpty else {
            throw HTTPClientError(.invalidRequest, message: "not an http URL with a host: \(url.absoluteString)")
        }
        self.host = host
        port = components.port ?? 80
        guard (1...65_535).contains(port) else { throw HTTPClientError(.invalidRequest, message: "invalid port in \(url.absoluteString)") }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        pathAndQuery = components.percentEncodedQuery.map { "\(path)?\($0)" } ?? path
    }

    /// Connections to the same host and port can carry each other's requests.
    var connectionKey: String { "\(host):\(port)" }

    /// The `Host` header value.
    var hostHeader: String {
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return port == 80 ? bracketed : "\(bracketed):\(port)"
    }
}

/// One request of `HTTPClient` over `LWSHTTPTransport`: the encoded request, the caller
/// waiting for the head, and the body stream.
///
/// `@unchecked Sendable`: `caller` is guarded by its lock; everything else after `init` is
/// touched only on the transport's service thread.
final class LWSHTTPExchange: @unchecked Sendable {
    /// The response head handed to the caller.
    struct Head: Sendable {
        var status: Int
        var headers: [String: String]
    }

    let target: LWSHTTPTarget
    let method: String
    /// The request head and body, ready to write.
    let requestBytes: Data
    /// The longest wait for the next byte of the response.
    let idleTimeout: Duration
    private let body: AsyncThrowingStream<Data, any Error>.Continuation
    private let caller = Locked<(head: CheckedContinuation<Head, any Error>?, cancelled: Bool)>((nil, false))

    // Service thread only.
    /// The connection carrying the exchange, while it does.
    var connection: LWSHTTPConnection?
    /// Whether the exchange reached its end (complete, failed or cancelled).
    private(set) var isFinished = false

    /// Header fields the exchange writes itself.
    private static let managedHeaders: Set<String> = ["host", "content-length", "connection", "transfer-encoding"]

    /// Encodes `request`.
    /// - Throws: `HTTPClientError` `.invalidRequest` for a URL that is not `http://`, a method
    ///   that is not a token, or a header name or value that could split the request.
    init(_ request: HTTPClient.Request, body: AsyncThrowingStream<Data, any Error>.Continuation) throws(HTTPClientError) {
        target = try LWSHTTPTarget(request.url)
        method = request.method
        idleTimeout = request.idleTimeout
        self.body = body
        guard !method.isEmpty, method.utf8.allSatisfy(Self.isTokenByte) else {
            throw HTTPClientError(.invalidRequest, message: "invalid method \(method)")
        }
        var head = "\(method) \(target.pathAndQuery) HTTP/1.1\r\nHost: \(target.hostHeader)\r\n"
        for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) {
            guard !name.isEmpty, name.utf8.allSatisfy(Self.isTokenByte) else {
                throw HTTPClientError(.invalidRequest, message: "invalid header name \(name)")
            }
            guard !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                throw HTTPClientError(.invalidRequest, message: "header \(name) has a line break in its value")
            }
            if Self.managedHeaders.contains(name.lowercased()) { continue }
            head += "\(name): \(value)\r\n"
        }
        if request.body != nil || ["POST", "PUT", "PATCH"].contains(method.uppercased()) {
            head += "Content-Length: \(request.body?.count ?? 0)\r\n"
        }
        head += "\r\n"
        var bytes = Data(head.utf8)
        if let payload = request.body { bytes.append(payload) }
        requestBytes = bytes
    }

    /// RFC 9110 token characters (method and field names).
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    /// Caller: waits here for the head; `false` when the exchange was already cancelled.
    func awaitHead(_ continuation: CheckedContinuation<Head, any Error>) -> Bool {
        let cancelled = caller.withLock { caller -> Bool in
            if !caller.cancelled { caller.head = continuation }
            return caller.cancelled
        }
        if cancelled { continuation.resume(throwing: CancellationError()) }
        return !cancelled
    }

    /// Any thread: the caller gave up (task cancelled, body dropped). Returns whether this call
    /// cancelled it (the transport then closes the connection on its thread).
    @discardableResult
    func markCancelled() -> Bool {
        let (pending, first) = caller.withLock { caller -> (CheckedContinuation<Head, any Error>?, Bool) in
            defer { caller.head = nil; caller.cancelled = true }
            return (caller.head, !caller.cancelled)
        }
        pending?.resume(throwing: CancellationError())
        return first
    }

    /// Whether the caller gave up.
    var isCancelled: Bool { caller.withLock { $0.cancelled } }

    // MARK: Service thread

    /// The head arrived.
    func receivedHead(_ head: Head) {
        let pending = caller.withLock { caller -> CheckedContinuation<Head, any Error>? in
            defer { caller.head = nil }
            return caller.head
        }
        pending?.resume(returning: head)
    }

    /// Body bytes arrived.
    func receivedBody(_ bytes: Data) {
        body.yield(bytes)
    }

    /// The response is complete.
    func completed() {
        guard !isFinished else { return }
        isFinished = true
        connection = nil
        body.finish()
    }

    /// The exchange failed (or was cancelled: `error` is then a `CancellationError`).
    func failed(_ error: any Error) {
        guard !isFinished else { return }
        isFinished = true
        connection = nil
        let pending = caller.withLock { caller -> CheckedContinuation<Head, any Error>? in
            defer { caller.head = nil }
            return caller.head
        }
        pending?.resume(throwing: error)
        body.finish(throwing: error)
    }
}
