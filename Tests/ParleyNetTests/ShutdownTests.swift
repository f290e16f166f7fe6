import Foundation
import ParleyNet
import Testing

@Suite("Graceful shutdown and keepalive")
struct ShutdownTests {
    @Test func finishesInFlightRequestsAndRefusesNewOnes() async throws {
        let (started, startedContinuation) = AsyncStream<Void>.makeStream()
        let (release, releaseContinuation) = AsyncStream<Void>.makeStream()
        var router = Router()
        router.get("/slow") { _ in
            startedContinuation.yield()
            for await _ in release { break }
            return .text("finished")
        }
        router.get("/fast") { _ in .text("fast") }
        let server = HTTPServer(router: router)
        try server.start()
        let port = server.port

        let inFlight = Task { () -> (Int, Data) in
            let response = try await fetch(port: port, path: "/slow")
            return (response.status, response.body)
        }
        for await _ in started { break }
        let shutdown = Task { await server.shutdown() }

        // While draining, new requests are refused with 503.
        try await withDeadline(30) {
            while true {
                let socket = try RawSocket(port: port)
                try await socket.send("GET /fast HTTP/1.1\r\nHost: x\r\n\r\n")
                if try await socket.receiveResponse().status == 503 { return }
            }
        }
        releaseContinuation.yield()
        let finished = try await inFlight.value
        #expect(finished.0 == 200)
        #expect(String(decoding: finished.1, as: UTF8.self) == "finished")
        try await withDeadline(30) { await shutdown.value }
        await #expect(throws: RawSocketError.self) { try await RawSocket(port: port).send("GET / HTTP/1.1\r\n\r\n") }
    }

    @Test func aPortInUseIsABindError() async throws {
        try await withServer(router: Router()) { server in
            #expect(server.port > 0)
            let second = HTTPServer(configuration: HTTPServer.Configuration(port: server.port), router: Router())
            #expect(second.port == 0)
            #expect(throws: HTTPServerError.bindFailed(host: "127.0.0.1", port: server.port)) { try second.start() }
        }
    }

    /// Handlers run on the server's network thread: one that only ever yields must still leave
    /// that thread to the sockets, so other requests are answered.
    @Test func aHandlerThatKeepsYieldingDoesNotStarveOtherRequests() async throws {
        let (spinning, spinningContinuation) = AsyncStream<Void>.makeStream()
        var router = Router()
        router.webSocket("/spin", WebSocketRoute(
            decide: { _ in .accept(subprotocol: nil) },
            onConnection: { connection, _ in
                spinningContinuation.yield()
                while connection.isOpen, !Task.isCancelled { await Task.yield() }
            }))
        router.get("/fast") { _ in .text("fast") }
        try await withServer(router: router) { server in
            let connection = try await WebSocketClient.connect(to: WebSocketTests.url(server, "/spin"))
            try await withDeadline(30) { for await _ in spinning { return } }
            let port = server.port
            let response = try await withDeadline(30) { () -> (status: Int, body: Data) in
                let response = try await fetch(port: port, path: "/fast")
                return (response.status, response.body)
            }
            #expect(response.status == 200)
            #expect(String(decoding: response.body, as: UTF8.self) == "fast")
            connection.close()
        }
    }

    @Test func idleWebSocketThatNeverAnswersPingsIsDropped() async throws {
        var configuration = HTTPServer.Configuration()
        configuration.webSocketIdleTimeout = 2
        let (closed, closedContinuation) = AsyncStream<UInt16?>.makeStream()
        var router = Router()
        router.webSocket("/idle", WebSocketRoute(
            decide: { _ in .accept(subprotocol: nil) },
            onConnection: { connection, _ in
                for await _ in connection.messages {}
                closedContinuation.yield(connection.closeCode)
            }))
        try await withServer(configuration, router: router) { server in
            // A raw client that completes the handshake, then never reads or answers pings.
            let socket = try RawSocket(port: server.port)
            try await socket.send("GET /idle HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
            _ = try await socket.receive(until: "\r\n\r\n")
            let code = try await withDeadline(30) { () -> UInt16? in
                for await code in closed { return code }
                return nil
            }
            #expect(code == 1006)
        }
    }

    /// lws' libev glue used to leave the loop waiting for the deadline its timer had first: a
    /// 2 s idle timeout set while a 15 s keep-alive timeout was armed fired only when the 15 s
    /// were up.
    @Test func aShortTimeoutFiresBeforeALongerOneArmedEarlier() async throws {
        var configuration = HTTPServer.Configuration()
        configuration.webSocketIdleTimeout = 2
        // Timed by the handler, on the server's thread: however late the test's own task runs.
        let (idleSeconds, droppedContinuation) = AsyncStream<Double>.makeStream()
        var router = Router()
        router.get("/ok") { _ in .text("ok") }
        router.webSocket("/idle", WebSocketRoute(
            decide: { _ in .accept(subprotocol: nil) },
            onConnection: { connection, _ in
                let established = ContinuousClock.now
                for await _ in connection.messages {}
                let elapsed = ContinuousClock.now - established
                droppedContinuation.yield(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
            }))
        try await withServer(configuration, router: router) { server in
            // An idle keep-alive connection: lws closes it after 15 s.
            let keptAlive = try RawSocket(port: server.port)
            try await keptAlive.send("GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try await keptAlive.receiveResponse().status == 200)
            // Then a WebSocket that never answers pings: dropped after 2 s (at most a second
            // more for lws' timer), not when the keep-alive timeout comes.
            let idle = try RawSocket(port: server.port)
            try await idle.send("GET /idle HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
            _ = try await idle.receive(until: "\r\n\r\n")
            let seconds = try await withDeadline(30) { () -> Double in
                for await seconds in idleSeconds { return seconds }
                return .infinity
            }
            #expect(seconds < 8, "the idle WebSocket was dropped after \(seconds) s")
        }
    }

    @Test func aClientAnsweringPingsStaysConnected() async throws {
        var configuration = HTTPServer.Configuration()
        configuration.webSocketIdleTimeout = 2
        try await withServer(configuration, router: WebSocketTests.echoRouter()) { server in
            let connection = try await WebSocketClient.connect(to: WebSocketTests.url(server))
            // Outlive the idle timeout twice over: lws on the client answers the pings.
            let stillOpen = try await withDeadline(30) { () -> Bool in
                let start = ContinuousClock.now
                var iterator = connection.messages.makeAsyncIterator()
                while ContinuousClock.now - start < .seconds(4) {
                    try connection.send(.text("tick"))
                    guard await iterator.next() == .text("tick") else { return false }
                    // Pace the traffic: the point is to outlive the idle timeout.
                    try await Task.sleep(for: .milliseconds(500))
                }
                return connection.isOpen
            }
            #expect(stillOpen)
        }
    }
}
