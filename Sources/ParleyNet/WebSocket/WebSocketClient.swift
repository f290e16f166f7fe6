import CLibWebsockets
import Foundation
import ParleySync

/// How a WebSocket client checks the server's TLS certificate.
public struct ClientTLSOptions: Sendable, Equatable {
    /// Accept a certificate that is not signed by a trusted authority (self-signed).
    public var allowSelfSigned: Bool
    /// Check that the certificate names the host connected to.
    public var verifyHostname: Bool
    /// Accept an expired certificate.
    public var allowExpired: Bool

    /// Creates TLS options; the defaults verify everything.
    public init(allowSelfSigned: Bool = false, verifyHostname: Bool = true, allowExpired: Bool = false) {
        self.allowSelfSigned = allowSelfSigned
        self.verifyHostname = verifyHostname
        self.allowExpired = allowExpired
    }

    /// Full verification against the system's trusted authorities.
    public static let `default` = ClientTLSOptions()
    /// Accept self-signed certificates for any host name (local development and tests).
    public static let selfSigned = ClientTLSOptions(allowSelfSigned: true, verifyHostname: false)
}

/// Opens WebSocket connections (`ws://` and `wss://`) on libwebsockets.
///
/// ```swift
/// let connection = try await WebSocketClient.connect(
///     to: URL(string: "ws://127.0.0.1:8080/v1/realtime")!,
///     headers: ["Authorization": "Bearer \(token)"], subprotocols: ["realtime"])
/// try connection.send(.text(#"{"type":"session.update"}"#))
/// for await message in connection.messages { print(message) }
/// ```
public enum WebSocketClient {
    /// Connects and completes the opening handshake.
    /// - Parameters:
    ///   - url: A `ws://` or `wss://` URL.
    ///   - headers: Extra request headers (for example `Authorization`).
    ///   - subprotocols: Offered in `Sec-WebSocket-Protocol`; the server's choice is in
    ///     `connection.subprotocol`.
    ///   - tls: Certificate checks for `wss://`.
    ///   - maxMessageSize: Larger incoming messages close the connection with 1009.
    ///   - maxOutgoingQueueBytes: A bigger backlog of unsent messages closes it with 1008.
    /// - Throws: `WebSocketError.invalidURL`, or `WebSocketError.connectionFailed` with lws'
    ///   reason (refused, TLS failure, HTTP status instead of 101…).
    public static func connect(
        to url: URL,
        headers: HTTPHeaders = [],
        subprotocols: [String] = [],
        tls: ClientTLSOptions = .default,
        maxMessageSize: Int = 16 << 20,
        maxOutgoingQueueBytes: Int = 8 << 20
    ) async throws -> WebSocketConnection {
        let target = try WebSocketTarget(url)
        let engine = try WebSocketClientEngine.shared()
        let session = ClientSession(
            engine: engine, target: target, headers: headers, subprotocols: subprotocols, tls: tls,
            maxMessageSize: maxMessageSize, maxOutgoingQueueBytes: maxOutgoingQueueBytes)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                session.start(continuation)
            }
        } onCancel: {
            session.cancel()
        }
    }
}

/// The parts of a WebSocket URL lws needs.
struct WebSocketTarget: Sendable {
    var host: String
    var port: Int
    var path: String
    var secure: Bool

    init(_ url: URL) throws {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              let scheme = components.scheme?.lowercased(), let host = components.host, !host.isEmpty
        else { throw WebSocketError.invalidURL(url.absoluteString) }
        switch scheme {
        case "ws", "http": secure = false
        case "wss", "https": secure = true
        default: throw WebSocketError.invalidURL(url.absoluteString)
        }
        self.host = host
        port = components.port ?? (secure ? 443 : 80)
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        self.path = components.percentEncodedQuery.map { "\(path)?\($0)" } ?? path
    }

    /// The `Host` header value.
    var hostHeader: String {
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? bracketed : "\(bracketed):\(port)"
    }
}

/// The process-wide client context and its service thread, created on first use.
///
/// `@unchecked Sendable`: `sessions` is touched only on the service thread; the rest is
/// immutable after creation.
final class WebSocketClientEngine: @unchecked Sendable {
    private static let instance = Locked<WebSocketClientEngine?>(nil)

    /// The shared engine, creating it (and its thread) the first time.
    static func shared() throws -> WebSocketClientEngine {
        try instance.withLock { instance in
            if let instance { return instance }
            let engine = WebSocketClientEngine()
            try engine.start()
            instance = engine
            return engine
        }
    }

    static let protocolName = "parley-client"
    private let strings = CStringPool()
    private var protocols: UnsafeMutablePointer<lws_protocols>?
    private(set) var loop: ServiceLoop?
    /// Sessions from the connect call until their lws connection is destroyed.
    private var sessions: [ObjectIdentifier: ClientSession] = [:]

    private func start() throws {
        guard let eventLoop = EventLoop(), let (context, protocols) = LWSClientContext.create(
            protocolName: strings.copy(Self.protocolName), callback: webSocketClientCallback,
            owner: Unmanaged.passUnretained(self).toOpaque(),
            options: UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT) | UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8),
            eventLoop: eventLoop
        ) else {
            throw WebSocketError.connectionFailed(reason: "libwebsockets could not create a client context")
        }
        self.protocols = protocols
        let loop = ServiceLoop(context: context, eventLoop: eventLoop, name: "parley-ws-out")
        self.loop = loop
        loop.start()
    }

    /// Service thread: keeps `session` alive while lws knows it.
    func register(_ session: ClientSession) {
        sessions[ObjectIdentifier(session)] = session
    }

    /// Service thread: forgets `session`.
    func unregister(_ session: ClientSession) {
        sessions[ObjectIdentifier(session)] = nil
    }

    func handle(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        guard let pointer = lws_get_opaque_user_data(wsi) else { return 0 }
        let session = Unmanaged<ClientSession>.fromOpaque(pointer).takeUnretainedValue()
        let bytes = UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
        switch reason {
        case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
            return session.appendHeaders(wsi, input, length)
        case LWS_CALLBACK_CLIENT_FILTER_PRE_ESTABLISH:
            session.connection.setSubprotocol(LWSRequestHead.value(wsi, WSI_TOKEN_PROTOCOL))
        case LWS_CALLBACK_CLIENT_ESTABLISHED:
            session.established(wsi)
        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            let text = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "connection failed"
            let status = Int(lws_http_client_http_response(wsi))
            session.failed(status > 0 && status != 101 ? "\(text) (HTTP \(status))" : text)
        case LWS_CALLBACK_CLIENT_RECEIVE:
            return session.connection.receive(wsi, bytes)
        case LWS_CALLBACK_CLIENT_WRITEABLE:
            return session.connection.writable(wsi)
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            session.connection.peerClosing(bytes)
        case LWS_CALLBACK_CLIENT_CLOSED:
            session.connection.closed()
        case LWS_CALLBACK_WSI_DESTROY:
            lws_set_opaque_user_data(wsi, nil)
            session.destroyed()
        default:
            break
        }
        return 0
    }
}

/// One client connection from `connect` until lws destroys it.
///
/// `@unchecked Sendable`: `continuation` and `cancelled` are guarded by `resolution`'s lock;
/// the C strings and `wsi` are touched only on the service thread.
final class ClientSession: ServiceThreadWork, @unchecked Sendable {
    let connection: WebSocketConnection
    private let engine: WebSocketClientEngine
    private let target: WebSocketTarget
    private let headers: HTTPHeaders
    private let subprotocols: [String]
    private let tls: ClientTLSOptions
    private let strings = CStringPool()
    private let resolution = Locked<(continuation: CheckedContinuation<WebSocketConnection, Error>?, cancelled: Bool)>((nil, false))
    private var wsi: OpaquePointer?
    private var started = false

    init(engine: WebSocketClientEngine, target: WebSocketTarget, headers: HTTPHeaders, subprotocols: [String],
         tls: ClientTLSOptions, maxMessageSize: Int, maxOutgoingQueueBytes: Int) {
        self.engine = engine
        self.target = target
        self.headers = headers
        self.subprotocols = subprotocols
        self.tls = tls
        connection = WebSocketConnection(
            wsi: nil, loop: engine.loop!, subprotocol: nil,
            maxMessageSize: maxMessageSize, maxOutgoingQueueBytes: maxOutgoingQueueBytes)
    }

    /// Hands the connect over to the service thread.
    func start(_ continuation: CheckedContinuation<WebSocketConnection, Error>) {
        let cancelled = resolution.withLock { resolution -> Bool in
            resolution.continuation = continuation
            return resolution.cancelled
        }
        if cancelled {
            resolve(.failure(CancellationError()))
            return
        }
        engine.loop!.schedule(self)
    }

    /// The connecting task was cancelled: fail the connect and drop the socket.
    func cancel() {
        resolution.withLock { $0.cancelled = true }
        resolve(.failure(CancellationError()))
        engine.loop?.schedule(self)
    }

    /// Service thread: starts the connection the first time; afterwards aborts it if cancelled.
    func runOnServiceThread() -> Bool {
        if started {
            if resolution.withLock({ $0.cancelled }), let wsi {
                lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
            }
            return true
        }
        started = true
        guard !resolution.withLock({ $0.cancelled }), let context = engine.loop?.context else {
            connection.closed()
            return false
        }
        var info = lws_client_connect_info()
        info.context = context
        info.address = strings.copy(target.host)
        info.port = Int32(target.port)
        info.path = strings.copy(target.path)
        info.host = strings.copy(target.hostHeader)
        info.origin = strings.copy(target.hostHeader)
        if !subprotocols.isEmpty { info.protocol = strings.copy(subprotocols.joined(separator: ", ")) }
        info.local_protocol_name = strings.copy(WebSocketClientEngine.protocolName)
        info.ietf_version_or_minus_one = -1
        info.alpn = strings.copy("http/1.1")
        if target.secure {
            var flags = LCCSCF_USE_SSL.rawValue
            if tls.allowSelfSigned { flags |= LCCSCF_ALLOW_SELFSIGNED.rawValue }
            if !tls.verifyHostname { flags |= LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK.rawValue }
            if tls.allowExpired { flags |= LCCSCF_ALLOW_EXPIRED.rawValue }
            info.ssl_connection = Int32(flags)
        }
        info.opaque_user_data = Unmanaged.passUnretained(self).toOpaque()
        engine.register(self)
        wsi = lws_client_connect_via_info(&info)
        if wsi == nil {
            failed("could not start connecting to \(target.host):\(target.port)")
            connection.closed()
            engine.unregister(self)
        }
        return true
    }

    /// Service thread: adds the caller's headers to the handshake request.
    func appendHeaders(_ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        guard let input, !headers.fields.isEmpty else { return 0 }
        let cursor = input.assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self)
        guard let start = cursor.pointee else { return 0 }
        let end = start + length
        for (name, value) in headers {
            let added = (name.lowercased() + ":").withCString { cName in
                Array(value.utf8).withUnsafeBufferPointer { bytes in
                    lws_add_http_header_by_name(
                        wsi, UnsafeRawPointer(cName).assumingMemoryBound(to: UInt8.self),
                        bytes.baseAddress, Int32(bytes.count), cursor, end)
                }
            }
            if added != 0 { return -1 }
        }
        return 0
    }

    /// Service thread: the handshake succeeded.
    func established(_ wsi: OpaquePointer) {
        self.wsi = wsi
        connection.attach(wsi)
        if !resolve(.success(connection)) {
            // Nobody is waiting any more (cancelled): close right away.
            connection.close(code: WebSocketCloseCode.goingAway)
        }
    }

    /// Service thread: connecting failed.
    func failed(_ reason: String) {
        resolve(.failure(WebSocketError.connectionFailed(reason: reason)))
    }

    /// Service thread: lws destroyed the connection.
    func destroyed() {
        // lws frees the wsi after this callback: a cancel scheduled later must not touch it.
        wsi = nil
        failed("connection closed during the handshake")
        connection.closed()
        engine.unregister(self)
    }

    /// Resumes the connect call once; returns whether this call did it.
    @discardableResult
    private func resolve(_ result: Result<WebSocketConnection, Error>) -> Bool {
        let continuation = resolution.withLock { resolution -> CheckedContinuation<WebSocketConnection, Error>? in
            defer { resolution.continuation = nil }
            return resolution.continuation
        }
        continuation?.resume(with: result)
        return continuation != nil
    }
}

/// The lws protocol callback of the client context.
func webSocketClientCallback(
    _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
    _ input: UnsafeMutableRawPointer?, _ length: Int
) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let owner = lws_context_user(context) else { return 0 }
    let engine = Unmanaged<WebSocketClientEngine>.fromOpaque(owner).takeUnretainedValue()
    return engine.handle(wsi, reason, input, length)
}
