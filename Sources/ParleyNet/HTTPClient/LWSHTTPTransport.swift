import CLibWebsockets
import Foundation
import ParleySync

/// `HTTPClient`'s transport for `http://` URLs, and for `https://` URLs of requests with an
/// outbound policy: HTTP/1.1 on libwebsockets raw TCP connections (TLS by `TLSClientSession`),
/// serviced by one thread for the whole process, with keep-alive connections pooled per host,
/// port and checked address. A request never waits for another: without an idle connection it
/// opens a new one.
///
/// A connection a server closed while it sat idle is noticed when the close arrives; a request
/// that meets such a close before any byte of its response is sent again on a fresh connection.
/// Past `maximumConnectionsPerHost` open connections to one host, requests wait for one.
///
/// `@unchecked Sendable`: `connections`, `idle`, `openCount` and `waiting` are touched only on
/// the service thread; the rest is immutable after `start`.
final class LWSHTTPTransport: @unchecked Sendable {
    private static let instance = Locked<LWSHTTPTransport?>(nil)

    /// The process-wide transport, created (with its thread) on first use.
    static func shared() throws(HTTPClientError) -> LWSHTTPTransport {
        let result = instance.withLock { instance -> Result<LWSHTTPTransport, HTTPClientError> in
            if let instance { return .success(instance) }
            let transport = LWSHTTPTransport()
            do {
                try transport.start()
            } catch let error as HTTPClientError {
                return .failure(error)
            } catch {
                return .failure(HTTPClientError(.other, message: "\(error)"))
            }
            instance = transport
            return .success(transport)
        }
        return try result.get()
    }

    static let protocolName = "parley-http-client"
    /// How long an idle connection is kept for the next request.
    static let idleLifetime: Duration = .seconds(20)
    /// The most idle connections kept per host and port.
    static let maximumIdlePerHost = 256
    /// The most connections open to one host and port; more requests wait for one of them.
    static let maximumConnectionsPerHost = 1_024

    private let strings = CStringPool()
    private var protocols: UnsafeMutablePointer<lws_protocols>?
    private(set) var loop: ServiceLoop?
    /// Every connection lws knows, until it is destroyed.
    private var connections: [ObjectIdentifier: LWSHTTPConnection] = [:]
    /// Idle keep-alive connections by connection key (`LWSHTTPExchange.connectionKey`), the most recently used last.
    private var idle: [String: [LWSHTTPConnection]] = [:]
    /// Connections open (or opening) by connection key.
    private var openCount: [String: Int] = [:]
    /// Requests waiting for a connection to a host at its limit, oldest first.
    private var waiting: [String: [LWSHTTPExchange]] = [:]

    private func start() throws {
        guard let eventLoop = EventLoop(), let (context, protocols) = LWSClientContext.create(
            protocolName: strings.copy(Self.protocolName), callback: lwsHTTPClientCallback, owner: Unmanaged.passUnretained(self).toOpaque(), eventLoop: eventLoop
        ) else {
            throw HTTPClientError(.other, message: "libwebsockets could not create an HTTP client context")
        }
        self.protocols = protocols
        let loop = ServiceLoop(context: context, eventLoop: eventLoop, name: "parley-http-out")
        self.loop = loop
        loop.start()
    }

    /// Any thread: sends `exchange` once the caller waits for its head.
    func start(_ exchange: LWSHTTPExchange) {
        loop?.schedule(ServiceThreadTask { [self] in
            guard !exchange.isCancelled else {
                exchange.failed(CancellationError())
                return
            }
            assign(exchange, reuse: true)
        })
    }

    /// Any thread: the caller of `exchange` gave up; closes its connection if it still has one.
    func cancel(_ exchange: LWSHTTPExchange) {
        guard exchange.markCancelled() else { return }
        loop?.schedule(ServiceThreadTask {
            if let connection = exchange.connection {
                connection.abort()
            } else {
                exchange.failed(CancellationError())
            }
        })
    }

    /// Service thread: puts `exchange` on an idle connection to its host (with `reuse`), or a new one.
    func assign(_ exchange: LWSHTTPExchange, reuse: Bool) {
        let key = exchange.connectionKey
        if reuse {
            while var pool = idle[key], let connection = pool.popLast() {
                idle[key] = pool.isEmpty ? nil : pool
                if connection.isUsable {
                    connection.begin(exchange)
                    return
                }
            }
        }
        guard openCount[key, default: 0] < Self.maximumConnectionsPerHost else {
            waiting[key, default: []].append(exchange)
            return
        }
        guard let context = loop?.context else {
            exchange.failed(HTTPClientError(.other, message: "the HTTP client has stopped"))
            return
        }
        let tls: TLSClientSession?
        do {
            tls = try exchange.tls.map { try TLSClientSession(context: $0, serverName: exchange.target.host) }
        } catch {
            exchange.failed(error)
            return
        }
        let connection = LWSHTTPConnection(key: key, tls: tls, transport: self)
        connections[ObjectIdentifier(connection)] = connection
        openCount[key, default: 0] += 1
        connection.begin(exchange)
        let connectionStrings = connection.strings
        var info = lws_client_connect_info()
        info.context = context
        info.address = connectionStrings.copy(exchange.target.connectHost)
        info.port = Int32(exchange.target.port)
        info.path = connectionStrings.copy("/")
        info.host = info.address
        info.method = connectionStrings.copy("RAW")
        info.local_protocol_name = connectionStrings.copy(Self.protocolName)
        info.opaque_user_data = Unmanaged.passUnretained(connection).toOpaque()
        let wsi = lws_client_connect_via_info(&info)
        if wsi == nil {
            // lws may already have reported the failure (and destroyed the wsi) during the call;
            // either way no callback comes for this connection any more.
            connection.connectFailed("the connection could not be started")
            if connections.removeValue(forKey: ObjectIdentifier(connection)) != nil { connectionEnded(key) }
        } else if connection.wsi == nil {
            connection.wsi = wsi
        }
    }

    /// Service thread: `connection` finished a response and may carry the next request.
    func release(_ connection: LWSHTTPConnection) {
        if let next = nextWaiting(for: connection.key) {
            connection.begin(next)
            return
        }
        var pool = idle[connection.key] ?? []
        guard pool.count < Self.maximumIdlePerHost else {
            connection.close()
            return
        }
        pool.append(connection)
        idle[connection.key] = pool
        connection.parked(for: Self.idleLifetime)
    }

    /// The oldest waiting request to `key` whose caller still waits.
    private func nextWaiting(for key: String) -> LWSHTTPExchange? {
        while var queue = waiting[key], !queue.isEmpty {
            let next = queue.removeFirst()
            waiting[key] = queue.isEmpty ? nil : queue
            if !next.isFinished { return next }
        }
        return nil
    }

    /// A connection to `key` is gone: a waiting request may open another.
    private func connectionEnded(_ key: String) {
        let remaining = openCount[key, default: 1] - 1
        openCount[key] = remaining > 0 ? remaining : nil
        if let next = nextWaiting(for: key) { assign(next, reuse: true) }
    }

    private func removeFromIdle(_ connection: LWSHTTPConnection) {
        if let pool = idle[connection.key] {
            let remaining = pool.filter { $0 !== connection }
            idle[connection.key] = remaining.isEmpty ? nil : remaining
        }
    }

    /// Service thread: one lws callback for one of the transport's connections.
    func handle(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        guard let pointer = lws_get_opaque_user_data(wsi) else { return 0 }
        let connection = Unmanaged<LWSHTTPConnection>.fromOpaque(pointer).takeUnretainedValue()
        switch reason {
        case LWS_CALLBACK_RAW_CONNECTED:
            connection.didConnect(wsi)
        case LWS_CALLBACK_RAW_WRITEABLE:
            return connection.writable()
        case LWS_CALLBACK_RAW_RX:
            guard let input, length > 0 else { return 0 }
            return connection.receive(UnsafeRawBufferPointer(start: input, count: length))
        case LWS_CALLBACK_TIMER:
            connection.timerFired(idleLifetime: Self.idleLifetime)
        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            let text = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "connection failed"
            connection.connectFailed(text)
        case LWS_CALLBACK_RAW_CLOSE:
            connection.didClose()
            removeFromIdle(connection)
        case LWS_CALLBACK_WSI_DESTROY:
            // The last callback with this pointer: the connection may go.
            lws_set_opaque_user_data(wsi, nil)
            connection.wsi = nil
            connection.connectFailed("connection closed")
            removeFromIdle(connection)
            if connections.removeValue(forKey: ObjectIdentifier(connection)) != nil { connectionEnded(connection.key) }
        default:
            break
        }
        return 0
    }
}

/// A closure to run on a service loop's thread.
private final class ServiceThreadTask: ServiceThreadWork {
    private let work: () -> Void

    init(_ work: @escaping () -> Void) { self.work = work }

    func runOnServiceThread() -> Bool {
        work()
        return true
    }
}

/// The lws protocol callback of the HTTP client context.
func lwsHTTPClientCallback(
    _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
    _ input: UnsafeMutableRawPointer?, _ length: Int
) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let owner = lws_context_user(context) else { return 0 }
    let transport = Unmanaged<LWSHTTPTransport>.fromOpaque(owner).takeUnretainedValue()
    return transport.handle(wsi, reason, input, length)
}
