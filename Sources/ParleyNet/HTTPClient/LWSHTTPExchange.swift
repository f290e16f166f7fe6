import Foundation
import ParleySync

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
    /// The TLS settings of an `https://` target.
    let tls: TLSClientContext?
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

    /// Encodes `request`, to go to `address` when given (see `LWSHTTPTarget`); an `https://`
    /// request trusts the system's certificate authorities and those in `additionalTrust`.
    /// - Throws: `HTTPClientError` `.invalidRequest` for a URL `LWSHTTPTarget` does not take, a
    ///   method that is not a token, a header name or value that could split the request, or
    ///   certificate authorities that cannot be loaded.
    init(
        _ request: HTTPClient.Request, address: IPAddress? = nil, additionalTrust: String? = nil,
        body: AsyncThrowingStream<Data, any Error>.Continuation
    ) throws(HTTPClientError) {
        target = try LWSHTTPTarget(request.url, address: address)
        tls = target.usesTLS ? try TLSClientContext.shared(additionalTrust: additionalTrust) : nil
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

    /// Connections to the same key can carry each other's requests: the target's, and for TLS
    /// the certificate authorities trusted besides the system's.
    var connectionKey: String {
        target.connectionKey + (tls?.additionalTrust.map { " trusting \($0)" } ?? "")
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
