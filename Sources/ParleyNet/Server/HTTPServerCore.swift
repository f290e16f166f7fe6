import CLibWebsockets
import Foundation
import ParleySync

/// The libwebsockets side of an `HTTPServer`: the context, its protocols and the callback
/// that turns lws events into exchanges and WebSocket connections.
///
/// `@unchecked Sendable`: `isDraining` is guarded by its lock; `liveWebSockets`,
/// `replayedUpgrades`, `peerAddresses`, `keepAliveWritables` and the subprotocol name buffer
/// are touched only on the service thread; the rest is immutable after `start()`.
final class HTTPServerCore: @unchecked Sendable {
    let configuration: HTTPServer.Configuration
    let router: Router
    let exchanges = ActivityTracker()
    let webSockets = ActivityTracker()
    private let staticFiles: StaticFiles?
    /// `configuration.additionalRequestHeaders`, prepared for lookups.
    private let customHeaderKeys: [CustomHeaderKey]
    private let strings = CStringPool()
    private let draining = Locked(false)

    // Kept alive for the context's lifetime: lws holds these pointers.
    private var protocols: UnsafeMutablePointer<lws_protocols>?
    private var retryPolicy: UnsafeMutablePointer<lws_retry_bo_t>?
    /// The name of the WebSocket protocol; rewritten before each upgrade to the subprotocol
    /// the route chose, because lws answers with the name of the protocol it matched.
    private let subprotocolName = UnsafeMutablePointer<CChar>.allocate(capacity: subprotocolNameCapacity)
    private static let subprotocolNameCapacity = 64

    private(set) var loop: ServiceLoop?
    private(set) var port = 0
    private(set) var vhost: OpaquePointer?
    private var liveWebSockets: [ObjectIdentifier: WebSocketConnection] = [:]
    /// Accepted upgrades whose handshake is being replayed to lws, by replay id.
    var replayedUpgrades: [String: PendingUpgrade] = [:]
    /// The peer address of each connection that has sent a request, kept until lws destroys
    /// the connection: a keep-alive connection's later requests cost no `getpeername` and no
    /// formatting.
    private var peerAddresses: [OpaquePointer: String] = [:]
    /// Keep-alive connections whose transaction completed in the current service pass, waiting
    /// for `serveKeepAliveWritables`; a connection lws destroys meanwhile leaves the list.
    private var keepAliveWritables: [OpaquePointer] = []

    static let httpProtocolName = "parley-http"
    static let rawProtocolName = "parley-raw"

    init(configuration: HTTPServer.Configuration, router: Router) {
        self.configuration = configuration
        self.router = router
        self.staticFiles = configuration.staticRoot.map(StaticFiles.init(root:))
        self.customHeaderKeys = configuration.additionalRequestHeaders.map(CustomHeaderKey.init)
        subprotocolName.initialize(repeating: 0, count: Self.subprotocolNameCapacity)
    }

    deinit {
        protocols?.deallocate()
        retryPolicy?.deallocate()
        subprotocolName.deallocate()
    }

    var isDraining: Bool {
        get { draining.withLock { $0 } }
        set { draining.withLock { $0 = newValue } }
    }

    // MARK: Starting

    /// Creates the context (binding the port) and starts the service thread.
    func start() throws {
        LWSLogging.configure()
        let protocols = UnsafeMutablePointer<lws_protocols>.allocate(capacity: 4)
        protocols.initialize(repeating: lws_protocols(), count: 4)
        protocols[0].name = strings.copy(Self.httpProtocolName)
        protocols[0].callback = httpServerCallback
        protocols[0].rx_buffer_size = 64 << 10
        protocols[1].name = UnsafePointer(subprotocolName)
        protocols[1].callback = httpServerCallback
        protocols[1].rx_buffer_size = 64 << 10
        protocols[2].name = strings.copy(Self.rawProtocolName)
        protocols[2].callback = httpServerCallback
        self.protocols = protocols

        let idle = max(configuration.webSocketIdleTimeout, 2)
        let retry = UnsafeMutablePointer<lws_retry_bo_t>.allocate(capacity: 1)
        retry.initialize(to: lws_retry_bo_t())
        retry.pointee.secs_since_valid_ping = UInt16(clamping: idle / 2)
        retry.pointee.secs_since_valid_hangup = UInt16(clamping: idle)
        self.retryPolicy = retry

        var info = lws_context_creation_info()
        info.port = Int32(configuration.port)
        info.iface = strings.copy(configuration.host)
        info.vhost_name = strings.copy("parley")
        info.protocols = UnsafePointer(protocols)
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.options = UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8) | UInt64(LWS_SERVER_OPTION_FALLBACK_TO_APPLY_LISTEN_ACCEPT_CONFIG)
        if !configuration.host.contains(":") { info.options |= UInt64(LWS_SERVER_OPTION_DISABLE_IPV6) }
        info.listen_accept_role = strings.copy("raw-skt")
        info.listen_accept_protocol = strings.copy(Self.rawProtocolName)
        info.max_http_header_data = 16 << 10
        info.max_http_header_pool = 256
        info.pt_serv_buf_size = 64 << 10
        info.keepalive_timeout = 15
        info.retry_and_idle_policy = UnsafePointer(retry)
        info.alpn = strings.copy("http/1.1")
        if let tls = configuration.tls {
            info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
            info.ssl_cert_filepath = strings.copy(tls.certificatePath)
            info.ssl_private_key_filepath = strings.copy(tls.privateKeyPath)
        }

        guard let eventLoop = EventLoop() else { throw HTTPServerError.bindFailed(host: configuration.host, port: configuration.port) }
        eventLoop.adopt(&info)
        guard let context = lws_create_context(&info) else {
            eventLoop.destroy()
            throw HTTPServerError.bindFailed(host: configuration.host, port: configuration.port)
        }
        guard let vhost = lws_get_vhost_by_name(context, "parley") else {
            lws_context_destroy(context)
            eventLoop.destroy()
            throw HTTPServerError.bindFailed(host: configuration.host, port: configuration.port)
        }
        port = Int(lws_get_vhost_listen_port(vhost))
        self.vhost = vhost
        let loop = ServiceLoop(context: context, eventLoop: eventLoop, name: "parley-http")
        self.loop = loop
        // The loop's thread keeps the core alive until the context is destroyed.
        loop.start(beforeEachWait: { [self] in serveKeepAliveWritables() }, onExit: { [self] in _ = self })
    }

    // MARK: Callback dispatch (service thread)

    func handle(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        switch reason {
        case LWS_CALLBACK_HTTP:
            return startExchange(wsi, path: CText.string(input, length: length))
        case LWS_CALLBACK_HTTP_BODY:
            guard let exchange = attached(wsi) as? HTTPExchange else { return -1 }
            let bytes = UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
            if !exchange.appendBody(bytes) {
                exchange.respondAndClose(.error(status: 413, code: "body_too_large",
                    message: "The request body exceeds \(configuration.maxRequestBodySize) bytes."))
            } else if !exchange.isDiscardingBody, exchange.isBodyTooSlow {
                exchange.respondAndClose(.error(status: 408, code: "request_timeout", message: "The request body arrived too slowly."))
            }
        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            guard let exchange = attached(wsi) as? HTTPExchange else { return -1 }
            return bodyCompleted(wsi, exchange)
        case LWS_CALLBACK_HTTP_WRITEABLE:
            guard let exchange = attached(wsi) as? HTTPExchange else { return 0 }
            if exchange.takeDispatch() { route(exchange) }
            return completeWrite(wsi, exchange, exchange.writable())
        case LWS_CALLBACK_CLOSED_HTTP:
            if let exchange = attached(wsi) as? HTTPExchange {
                exchange.connectionClosed()
                detach(wsi)
                exchanges.end()
            }
        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
            return confirmUpgrade(wsi, upgrade: input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "")
        case LWS_CALLBACK_ESTABLISHED:
            return webSocketEstablished(wsi)
        case LWS_CALLBACK_RECEIVE:
            let bytes = UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
            return withAttached(wsi, as: WebSocketConnection.self) { $0.receive(wsi, bytes) } ?? -1
        case LWS_CALLBACK_SERVER_WRITEABLE:
            return withAttached(wsi, as: WebSocketConnection.self) { $0.writable(wsi) } ?? -1
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            (attached(wsi) as? WebSocketConnection)?.peerClosing(UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length))
        case LWS_CALLBACK_CLOSED:
            (attached(wsi) as? WebSocketConnection)?.closed()
        case LWS_CALLBACK_RAW_RX:
            return MalformedRequest.answer(wsi, core: self)
        case LWS_CALLBACK_RAW_WRITEABLE:
            return attached(wsi) is MalformedRequest ? -1 : 0
        case LWS_CALLBACK_WSI_DESTROY:
            detach(wsi)
            peerAddresses[wsi] = nil
            if !keepAliveWritables.isEmpty { keepAliveWritables.removeAll { $0 == wsi } }
        default:
            break
        }
        return 0
    }

    // MARK: Per-connection objects

    /// Binds `object` to `wsi`, retained until `detach`.
    func attach(_ wsi: OpaquePointer, _ object: AnyObject) {
        detach(wsi)
        lws_set_opaque_user_data(wsi, Unmanaged.passRetained(object).toOpaque())
    }

    /// The object bound to `wsi`, if any.
    func attached(_ wsi: OpaquePointer) -> AnyObject? {
        guard let pointer = lws_get_opaque_user_data(wsi) else { return nil }
        return Unmanaged<AnyObject>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Runs `body` with the object bound to `wsi` when it is an `Object`, without retaining it
    /// (the binding holds it until lws destroys the connection, never inside a callback); the
    /// per-message callbacks use it.
    func withAttached<Object: AnyObject, Result>(_ wsi: OpaquePointer, as type: Object.Type, _ body: (Object) -> Result) -> Result? {
        guard let pointer = lws_get_opaque_user_data(wsi) else { return nil }
        return Unmanaged<AnyObject>.fromOpaque(pointer)._withUnsafeGuaranteedRef { object in
            object is Object ? body(unsafeDowncast(object, to: Object.self)) : nil
        }
    }

    /// Unbinds and releases whatever is bound to `wsi`.
    func detach(_ wsi: OpaquePointer) {
        guard let pointer = lws_get_opaque_user_data(wsi) else { return }
        lws_set_opaque_user_data(wsi, nil)
        Unmanaged<AnyObject>.fromOpaque(pointer).release()
    }

    // MARK: HTTP

    /// The numeric address of `wsi`'s peer.
    private func peerAddress(_ wsi: OpaquePointer) -> String {
        if let known = peerAddresses[wsi] { return known }
        let address = LWSRequestHead.remoteAddress(wsi)
        peerAddresses[wsi] = address
        return address
    }

    private func startExchange(_ wsi: OpaquePointer, path: String) -> Int32 {
        guard let method = LWSRequestHead.method(wsi)?.name else { return -1 }
        let request = HTTPRequest(
            method: method,
            path: path.isEmpty ? "/" : path,
            query: LWSRequestHead.query(wsi),
            headers: LWSRequestHead.headers(wsi, custom: customHeaderKeys),
            remoteAddress: peerAddress(wsi)
        )
        let exchange = HTTPExchange(
            wsi: wsi, loop: loop!, request: request,
            keepAlive: LWSRequestHead.wantsKeepAlive(wsi, connection: request.headers["connection"]),
            bodyLimit: configuration.maxRequestBodySize)
        attach(wsi, exchange)
        exchanges.begin()

        if isDraining {
            exchange.respondAndClose(.error(status: 503, code: "shutting_down", message: "The server is shutting down."))
            return 0
        }
        let contentLengthText = request.headers["content-length"]
        let contentLength = contentLengthText.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        if contentLengthText != nil, contentLength == nil || contentLength! < 0 {
            exchange.respondAndClose(.error(status: 400, code: "bad_request", message: "Invalid Content-Length."))
            return 0
        }
        if request.headers.contains("transfer-encoding") {
            exchange.respondAndClose(.error(status: 411, code: "length_required",
                message: "Chunked request bodies are not supported; send a Content-Length."))
            return 0
        }
        if let contentLength, contentLength > configuration.maxRequestBodySize {
            exchange.respondAndClose(.error(status: 413, code: "body_too_large",
                message: "The request body exceeds \(configuration.maxRequestBodySize) bytes."))
            return 0
        }
        if let contentLength, contentLength > 0 || method == "POST" {
            // lws reads the body next (POST with length 0 gets an empty body callback).
            exchange.expectBody(length: contentLength)
            if request.headers["expect"]?.lowercased() == "100-continue", contentLength > 0 {
                _ = LWSWrite.write(wsi, Data("HTTP/1.1 100 Continue\r\n\r\n".utf8), mode: LWS_WRITE_HTTP)
            }
            return 0
        }
        if contentLength == nil, ["POST", "PUT", "PATCH"].contains(method) {
            // lws treats the rest of the connection as body here, so it cannot be reused.
            exchange.closeAfterResponding()
        }
        return dispatch(wsi, exchange)
    }

    /// The body is complete: the request is routed from the next writable callback (there, a
    /// handler that answers without suspending is answered at once).
    ///
    /// Not from this callback, because of how lws 4.1 reads a request with a body that was
    /// pipelined behind another one (its head already in lws' input buffer): it reads the body
    /// from the start of that buffer, the request's own head, then reports the completion again
    /// and again without returning, or, once the transaction is complete, spins reading nothing.
    /// So a second report refuses the request, whose body is wrong, with 400 and closes the
    /// connection; its handler never runs.
    private func bodyCompleted(_ wsi: OpaquePointer, _ exchange: HTTPExchange) -> Int32 {
        guard exchange.markBodyComplete() else {
            if exchange.takeDispatch() {
                exchange.respond(.error(status: 400, code: "pipelined_body",
                    message: "A request with a body cannot follow another request before its response; send it after the response or on another connection."))
            }
            exchange.closeAfterResponding()
            _ = exchange.writable()
            return -1
        }
        if !exchange.isDiscardingBody { exchange.awaitDispatch() }
        return 0
    }

    /// Routes a request without a body and writes whatever answer is ready at once, inside
    /// `LWS_CALLBACK_HTTP`: a handler that answers without suspending costs no writable round
    /// trip. Otherwise `writable()` pauses reading until the handler delivers. Returns the
    /// callback's result.
    private func dispatch(_ wsi: OpaquePointer, _ exchange: HTTPExchange) -> Int32 {
        route(exchange)
        let outcome = exchange.writable()
        // Not answered in full yet: from here on the handler or the socket sets the pace.
        if case .wait = outcome { exchange.liftContentTimeout() }
        return completeWrite(wsi, exchange, outcome)
    }

    /// Runs the request's handler, or chooses the answer when no route takes it (either way the
    /// exchange then awaits its response).
    private func route(_ exchange: HTTPExchange) {
        let request = exchange.request
        switch router.match(method: request.method, path: request.path) {
        case .handler(let handler, let parameters):
            exchange.setPathParameters(parameters)
            exchange.run(handler)
        case .methodNotAllowed(let allowed):
            if let staticFiles, ["GET", "HEAD"].contains(request.method), staticFiles.resolve(request.path) != nil {
                exchange.run { request in staticFiles.response(for: request.path) }
                return
            }
            var response = HTTPResponse.error(status: 405, code: "method_not_allowed",
                message: "\(request.method) is not allowed on \(request.path).")
            response.headers.set("Allow", allowed.joined(separator: ", "))
            exchange.respond(response)
        case .notFound:
            if let staticFiles, ["GET", "HEAD"].contains(request.method) {
                exchange.run { request in staticFiles.response(for: request.path) }
                return
            }
            exchange.respond(.error(status: 404, code: "not_found", message: "No route for \(request.method) \(request.path)."))
        }
    }

    private func completeWrite(_ wsi: OpaquePointer, _ exchange: HTTPExchange, _ outcome: HTTPExchange.WriteOutcome) -> Int32 {
        switch outcome {
        case .wait:
            return 0
        case .close:
            return -1
        case .completed:
            exchange.resumeReading()
            exchange.completed()
            detach(wsi)
            exchanges.end()
            if lws_http_transaction_completed(wsi) != 0 { return -1 }
            // With output still buffered, lws waits for the socket to drain: leave that to it.
            if lws_partial_buffered(wsi) == 0 { keepAliveWritables.append(wsi) }
            return 0
        }
    }

    /// Serves the writable events lws asked for on the keep-alive connections whose response
    /// completed in this pass (`keepAliveWritables`), before the event loop looks for events.
    ///
    /// lws 4.1 ends every `lws_http_transaction_completed` by asking for a writable callback,
    /// with nothing to write. On libev's epoll backend, turning that request on and off again
    /// costs an `epoll_ctl` each, and the callback a pass of its own: two system calls and a
    /// wake-up per request, where lws' own poll loop pays none. The socket was written to a
    /// moment ago, so it is writable: serving the event now, through the loop as if the kernel
    /// had reported it, cancels the request before libev hands it to the kernel.
    private func serveKeepAliveWritables() {
        guard !keepAliveWritables.isEmpty, let loop else { return }
        let connections = keepAliveWritables
        keepAliveWritables = []
        loop.serveWritableNow(connections)
    }

    // MARK: WebSocket

    private func confirmUpgrade(_ wsi: OpaquePointer, upgrade: String) -> Int32 {
        if let replayID = LWSRequestHead.customValue(wsi, HandshakeReplay.headerName) {
            return acceptReplayedHandshake(wsi, id: replayID)
        }
        let path = LWSRequestHead.value(wsi, WSI_TOKEN_GET_URI) ?? "/"
        var request = HTTPRequest(
            method: "GET", path: path,
            query: LWSRequestHead.query(wsi),
            headers: LWSRequestHead.headers(wsi, custom: customHeaderKeys),
            remoteAddress: peerAddress(wsi)
        )
        guard upgrade.caseInsensitiveEquals("websocket") else {
            return refuseUpgrade(wsi, .error(status: 400, code: "unsupported_upgrade", message: "Only WebSocket upgrades are supported."))
        }
        if isDraining {
            return refuseUpgrade(wsi, .error(status: 503, code: "shutting_down", message: "The server is shutting down."))
        }
        guard let (route, parameters) = router.matchWebSocket(path: path) else {
            return refuseUpgrade(wsi, .error(status: 404, code: "not_found", message: "No WebSocket endpoint at \(path)."))
        }
        request.pathParameters = parameters
        switch route.decide(request) {
        case .reject(let response):
            return refuseUpgrade(wsi, response)
        case .accept(let subprotocol):
            let pending = PendingUpgrade(route: route, request: request, subprotocol: subprotocol)
            let offered = SubprotocolOffer(header: LWSRequestHead.value(wsi, WSI_TOKEN_PROTOCOL))
            switch offered.verdict(choosing: subprotocol, reserved: [Self.httpProtocolName, Self.rawProtocolName]) {
            case .refused(let response):
                return refuseUpgrade(wsi, response)
            case .exceedsLibwebsocketsLimits:
                return replayHandshake(wsi, pending)
            case .acceptable:
                setSubprotocolName(subprotocol ?? "")
                attach(wsi, pending)
                return 0
            }
        }
    }

    /// Writes `response` instead of upgrading; lws then ends the transaction.
    func refuseUpgrade(_ wsi: OpaquePointer, _ response: HTTPResponse) -> Int32 {
        let body: Data
        if case .data(let data) = response.body { body = data } else { body = Data() }
        var bytes = HTTPResponseHead.serialize(
            status: response.status, headers: response.headers, framing: .contentLength(body.count), keepAlive: true)
        bytes.append(body)
        return LWSWrite.write(wsi, bytes, mode: LWS_WRITE_HTTP) ? 1 : -1
    }

    func setSubprotocolName(_ name: String) {
        let bytes = Array(name.utf8.prefix(Self.subprotocolNameCapacity - 1))
        subprotocolName.update(repeating: 0, count: Self.subprotocolNameCapacity)
        bytes.withUnsafeBufferPointer { source in
            UnsafeMutableRawPointer(subprotocolName).copyMemory(from: source.baseAddress!, byteCount: source.count)
        }
    }

    private func webSocketEstablished(_ wsi: OpaquePointer) -> Int32 {
        guard let pending = attached(wsi) as? PendingUpgrade, let loop else { return -1 }
        let connection = WebSocketConnection(
            wsi: wsi, loop: loop, subprotocol: pending.subprotocol,
            maxMessageSize: configuration.maxWebSocketMessageSize,
            maxOutgoingQueueBytes: configuration.maxOutgoingQueueBytes)
        attach(wsi, connection)
        let id = ObjectIdentifier(connection)
        liveWebSockets[id] = connection
        webSockets.begin()
        // Strong on purpose (a weak reference would send every retain and release of the core
        // to the slow side-table path); `closed()` drops the closure.
        connection.onClosed = { [self] in
            liveWebSockets[id] = nil
            webSockets.end()
        }
        let route = pending.route
        let request = pending.request
        // On the service thread: each received message resumes the handler without a thread hop.
        connection.setHandlerTask(Task(executorPreference: loop.executor) {
            await connection.runHandler { await route.onConnection(connection, request) }
            connection.close()
        })
        return 0
    }

    /// Service thread: starts closing every open WebSocket with 1001.
    func closeAllWebSockets() {
        for connection in liveWebSockets.values {
            connection.close(code: WebSocketCloseCode.goingAway, reason: "server shutting down")
        }
    }
}

/// An upgrade the route accepted, waiting for lws to finish the handshake.
final class PendingUpgrade {
    let route: WebSocketRoute
    let request: HTTPRequest
    let subprotocol: String?

    init(route: WebSocketRoute, request: HTTPRequest, subprotocol: String?) {
        self.route = route
        self.request = request
        self.subprotocol = subprotocol
    }
}

/// The lws protocol callback of every server context.
func httpServerCallback(
    _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
    _ input: UnsafeMutableRawPointer?, _ length: Int
) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let owner = lws_context_user(context) else { return 0 }
    // The server keeps the core alive while its context exists: no retain per callback.
    return Unmanaged<HTTPServerCore>.fromOpaque(owner)._withUnsafeGuaranteedRef { core in
        core.handle(wsi, reason, input, length)
    }
}
