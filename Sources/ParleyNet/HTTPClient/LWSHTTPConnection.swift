import CLibWebsockets
import Foundation

/// One keep-alive TCP connection of `LWSHTTPTransport`: writes an exchange's request, parses
/// its response, and goes back to the transport's idle pool when the response allows it. An
/// `https://` connection first runs its TLS handshake, then passes everything through it.
/// Service thread only.
final class LWSHTTPConnection {
    /// Which requests the connection can carry (`LWSHTTPExchange.connectionKey`).
    let key: String
    /// TLS, for an `https://` connection.
    private let tls: TLSClientSession?
    private unowned let transport: LWSHTTPTransport
    /// The C strings of the connect call, kept for the connection's life.
    let strings = CStringPool()
    /// The lws connection, until it is destroyed.
    var wsi: OpaquePointer?
    private(set) var exchange: LWSHTTPExchange?
    private var parser = HTTPResponseParser(method: "GET")
    /// Whether the connection is up: TCP connected, and the TLS handshake done if there is one.
    private var connected = false
    private var requestPending = false
    /// Bytes for the socket waiting for it to be writable (TLS records; the request otherwise).
    private var outgoing = Data()
    /// Whether the connection carried an earlier response (a server may close it when idle).
    private(set) var carriedEarlierResponse = false
    private var lastActivity = ContinuousClock.now
    private var closing = false

    init(key: String, tls: TLSClientSession?, transport: LWSHTTPTransport) {
        self.key = key
        self.tls = tls
        self.transport = transport
    }

    /// Whether the connection can take a request now.
    var isUsable: Bool { wsi != nil && connected && !closing && exchange == nil }

    /// Takes `exchange`: its request goes out as soon as the socket is writable.
    func begin(_ exchange: LWSHTTPExchange) {
        self.exchange = exchange
        exchange.connection = self
        parser = HTTPResponseParser(method: exchange.method)
        requestPending = true
        lastActivity = .now
        if connected, let wsi { lws_callback_on_writable(wsi) }
    }

    /// The TCP connection is up: the request can go, or first the TLS handshake.
    func didConnect(_ wsi: OpaquePointer) {
        self.wsi = wsi
        guard let tls else {
            connected = true
            if requestPending { lws_callback_on_writable(wsi) }
            return
        }
        // The handshake counts against the exchange's idle timeout.
        lastActivity = .now
        if let exchange { armTimer(after: exchange.idleTimeout) }
        if case .failed(let reason) = tls.advanceHandshake() {
            connectFailed(reason)
            close()
            return
        }
        send(tls.takeOutgoing())
    }

    /// Writes the pending request and whatever else waits for the socket; `-1` closes the connection.
    func writable() -> Int32 {
        guard let wsi else { return 0 }
        var sendsRequest = false
        if connected, requestPending, let exchange {
            requestPending = false
            sendsRequest = true
            if let tls {
                do {
                    try tls.write(exchange.requestBytes)
                } catch {
                    return lost(error)
                }
                outgoing.append(tls.takeOutgoing())
            } else {
                outgoing.append(exchange.requestBytes)
            }
        }
        guard !outgoing.isEmpty else { return 0 }
        let bytes = outgoing
        outgoing = Data()
        guard LWSWrite.write(wsi, bytes, mode: LWS_WRITE_HTTP) else {
            return lost(HTTPClientError(.connectionLost, message: "the request could not be sent"))
        }
        if sendsRequest, let exchange {
            lastActivity = .now
            armTimer(after: exchange.idleTimeout)
        }
        return 0
    }

    /// Bytes arrived: response bytes, or TLS records carrying them; `-1` closes the connection.
    func receive(_ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard let tls else { return receivePlaintext(bytes) }
        lastActivity = .now
        tls.receive(bytes)
        if !tls.isEstablished {
            switch tls.advanceHandshake() {
            case .inProgress:
                send(tls.takeOutgoing())
                return 0
            case .failed(let reason):
                connectFailed(reason)
                return -1
            case .done:
                send(tls.takeOutgoing())
                connected = true
                if requestPending, let wsi { lws_callback_on_writable(wsi) }
            }
        }
        let plaintext: Data?
        do {
            plaintext = try tls.readPlaintext()
        } catch {
            return lost(error)
        }
        // Records of TLS itself (a session ticket, a key update) may want an answer.
        send(tls.takeOutgoing())
        guard let plaintext else { return -1 }  // The server closed TLS; lws reports the close.
        guard !plaintext.isEmpty else { return 0 }
        return plaintext.withUnsafeBytes { receivePlaintext($0) }
    }

    /// Response bytes arrived; `-1` closes the connection.
    private func receivePlaintext(_ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard let exchange else { return -1 }  // A server has nothing to say between responses.
        lastActivity = .now
        let events: [HTTPResponseParser.Event]
        do {
            events = try parser.push(bytes)
        } catch {
            self.exchange = nil
            exchange.failed(HTTPClientError(.connectionLost, message: "malformed response: \(error.description)"))
            return -1
        }
        deliver(events, to: exchange)
        guard parser.isComplete else { return 0 }
        self.exchange = nil
        carriedEarlierResponse = true
        guard parser.connectionReusable, !closing else { return -1 }
        transport.release(self)
        return 0
    }

    private func deliver(_ events: [HTTPResponseParser.Event], to exchange: LWSHTTPExchange) {
        for event in events {
            switch event {
            case .head(let status, let headers): exchange.receivedHead(.init(status: status, headers: headers))
            case .body(let bytes): exchange.receivedBody(bytes)
            case .end: exchange.completed()
            }
        }
    }

    /// lws closed the connection: ends the exchange, or hands it to a fresh connection when
    /// this reused one was closed by the server before any of the response came.
    func didClose() {
        wsi = nil
        closing = true
        guard let exchange else { return }
        self.exchange = nil
        if carriedEarlierResponse, !parser.hasStarted, !exchange.isCancelled {
            exchange.connection = nil
            transport.assign(exchange, reuse: false)
            return
        }
        do {
            deliver(try parser.connectionClosed(), to: exchange)
        } catch {
            exchange.failed(HTTPClientError(.connectionLost, message: error.description))
        }
    }

    /// Queues `bytes` for the socket.
    private func send(_ bytes: Data) {
        guard !bytes.isEmpty, let wsi else { return }
        outgoing.append(bytes)
        lws_callback_on_writable(wsi)
    }

    /// The exchange failed with `error` after the connection was made; `-1` closes the connection.
    private func lost(_ error: HTTPClientError) -> Int32 {
        closing = true
        if let exchange {
            self.exchange = nil
            exchange.failed(error)
        }
        return -1
    }

    /// Connecting failed.
    func connectFailed(_ reason: String) {
        closing = true
        guard let exchange else { return }
        self.exchange = nil
        exchange.failed(HTTPClientError(.connectionFailed, message: "cannot connect to \(key): \(reason)"))
    }

    /// The exchange's caller gave up: the connection is closed (the rest of the response is unwanted).
    func abort() {
        if let exchange {
            self.exchange = nil
            exchange.failed(CancellationError())
        }
        close()
    }

    /// Closes the connection soon (outside any lws callback of it).
    func close() {
        closing = true
        if let wsi { lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC) }
    }

    /// Idle in the pool: closes itself after `lifetime` unless a request comes first.
    func parked(for lifetime: Duration) {
        lastActivity = .now
        armTimer(after: lifetime)
    }

    /// The timer fired: the exchange's idle timeout, or the end of an idle connection's life.
    func timerFired(idleLifetime: Duration) {
        let limit = exchange?.idleTimeout ?? idleLifetime
        let quiet = ContinuousClock.now - lastActivity
        guard quiet >= limit else {
            armTimer(after: limit - quiet)
            return
        }
        if let exchange {
            self.exchange = nil
            exchange.failed(HTTPClientError(.timedOut, message: "no response data for \(limit)"))
        }
        close()
    }

    private func armTimer(after delay: Duration) {
        guard let wsi else { return }
        let (seconds, attoseconds) = delay.components
        let microseconds = max(1_000, seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
        lws_set_timer_usecs(wsi, lws_usec_t(microseconds))
    }
}
