import Foundation
import ParleyNet
import ParleyTesting
import Testing

@Suite("WebSocket server and client over real sockets")
struct WebSocketTests {
    /// A router with an echo endpoint that answers subprotocol `realtime` when offered.
    static func echoRouter(onClose: (@Sendable (UInt16?) -> Void)? = nil) -> Router {
        var router = Router()
        router.webSocket("/echo", WebSocketRoute(
            decide: { request in
                let offered = request.headers["sec-websocket-protocol"] ?? ""
                return .accept(subprotocol: offered.contains("realtime") ? "realtime" : nil)
            },
            onConnection: { connection, _ in
                for await message in connection.messages {
                    try? connection.send(message)
                }
                onClose?(connection.closeCode)
            }))
        return router
    }

    static func url(_ server: HTTPServer, _ path: String = "/echo", scheme: String = "ws") -> URL {
        URL(string: "\(scheme)://127.0.0.1:\(server.port)\(path)")!
    }

    @Test func echoesTextAndBinary() async throws {
        try await withServer(router: Self.echoRouter()) { server in
            let connection = try await WebSocketClient.connect(to: Self.url(server))
            var iterator = connection.messages.makeAsyncIterator()
            try connection.send(.text("héllo"))
            #expect(await iterator.next() == .text("héllo"))
            let bytes = Data((0..<1024).map { UInt8($0 % 251) })
            try connection.send(.binary(bytes))
            #expect(await iterator.next() == .binary(bytes))
            try connection.send(.binary(Data()))
            #expect(await iterator.next() == .binary(Data()))
            connection.close()
            await connection.waitUntilClosed()
            #expect(connection.closeCode == 1000)
            #expect(throws: WebSocketError.closed) { try connection.send(.text("late")) }
        }
    }

    @Test func negotiatesTheSubprotocolABrowserOffers() async throws {
        let seen = Guarded<String?>(nil)
        var router = Router()
        router.webSocket("/v1/realtime", WebSocketRoute(
            decide: { request in
                seen.withLock { $0 = request.headers["Sec-WebSocket-Protocol"] }
                return .accept(subprotocol: "realtime")
            },
            onConnection: { connection, _ in try? connection.send(.text(connection.subprotocol ?? "none")) }))
        try await withServer(router: router) { server in
            let connection = try await WebSocketClient.connect(
                to: Self.url(server, "/v1/realtime"), subprotocols: ["realtime", "openai-insecure-api-key.ek_abc123"])
            #expect(connection.subprotocol == "realtime")
            var iterator = connection.messages.makeAsyncIterator()
            #expect(await iterator.next() == .text("realtime"))
            #expect(seen.withLock { $0 } == "realtime, openai-insecure-api-key.ek_abc123")
        }
    }

    @Test func acceptsASubprotocolHeaderLongerThanLibwebsocketsAllows() async throws {
        // A browser sending a signed token: the header is far beyond lws' 126-byte limit.
        let token = "eyJhbGciOiJIUzI1NiJ9." + String(repeating: "eyJzdWIiOiJ1c2VyIn0", count: 12) + ".c2lnbmF0dXJl"
        let seen = Guarded<String?>(nil)
        var router = Router()
        router.webSocket("/v1/realtime", WebSocketRoute(
            decide: { request in
                seen.withLock { $0 = request.headers["Sec-WebSocket-Protocol"] }
                return .accept(subprotocol: "realtime")
            },
            onConnection: { connection, request in
                try? connection.send(.text(request.headers["sec-websocket-protocol"] ?? "none"))
                for await message in connection.messages { try? connection.send(message) }
            }))
        try await withServer(router: router) { server in
            for offer in [["realtime", "openai-insecure-api-key.\(token)"], ["openai-insecure-api-key.\(token)", "realtime"]] {
                let connection = try await WebSocketClient.connect(to: Self.url(server, "/v1/realtime"), subprotocols: offer)
                #expect(connection.subprotocol == "realtime")
                var iterator = connection.messages.makeAsyncIterator()
                // The handler sees the original request, token included.
                #expect(await iterator.next() == .text(offer.joined(separator: ", ")))
                try connection.send(.text("still works"))
                #expect(await iterator.next() == .text("still works"))
                #expect(seen.withLock { $0 } == offer.joined(separator: ", "))
                connection.close()
            }
            // A forged replay id is refused.
            let socket = try RawSocket(port: server.port)
            try await socket.send("GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + "X-Parley-Handshake-Replay: 00000000-0000-0000-0000-000000000000\r\n\r\n")
            #expect(try await socket.receiveResponse().status == 400)
        }
    }

    @Test func decideCanRejectWithAnHTTPStatusBeforeTheUpgrade() async throws {
        var router = Router()
        router.webSocket("/private", WebSocketRoute(
            decide: { request in
                request.headers["authorization"] == "Bearer good"
                    ? .accept(subprotocol: nil)
                    : .reject(.error(status: 401, code: "unauthorized", message: "Missing or bad token."))
            },
            onConnection: { connection, _ in try? connection.send(.text("welcome")) }))
        try await withServer(router: router) { server in
            await #expect(throws: WebSocketError.self) {
                _ = try await WebSocketClient.connect(to: Self.url(server, "/private"))
            }
            do {
                _ = try await WebSocketClient.connect(to: Self.url(server, "/private"))
            } catch let WebSocketError.connectionFailed(reason) {
                #expect(reason.contains("401"))
            }
            // The raw response carries the status and the JSON body.
            let socket = try RawSocket(port: server.port)
            try await socket.send("GET /private HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
            let response = try await socket.receiveResponse()
            #expect(response.status == 401)
            #expect(response.text.contains("unauthorized"))

            let accepted = try await WebSocketClient.connect(to: Self.url(server, "/private"), headers: ["Authorization": "Bearer good"])
            var iterator = accepted.messages.makeAsyncIterator()
            #expect(await iterator.next() == .text("welcome"))

            await #expect(throws: WebSocketError.self) {
                _ = try await WebSocketClient.connect(to: Self.url(server, "/nowhere"))
            }
        }
    }

    @Test func reassemblesA10MiBFragmentedMessage() async throws {
        try await withServer(router: Self.echoRouter()) { server in
            let connection = try await WebSocketClient.connect(to: Self.url(server))
            // 160 distinct 64 KiB blocks, so a reordered or dropped fragment cannot go unnoticed.
            var big = Data(capacity: 10 << 20)
            for block in 0..<160 { big.append(Data(repeating: UInt8(block), count: 64 << 10)) }
            // The client writes it as 64 KiB fragments; the server reassembles, echoes it
            // fragmented, and the client reassembles again.
            try connection.send(.binary(big))
            let messages = connection.messages
            let echoed = try await withDeadline(30) {
                var iterator = messages.makeAsyncIterator()
                return await iterator.next()
            }
            #expect(echoed == .binary(big))
        }
    }

    @Test func closesWith1009WhenAMessageIsTooBig() async throws {
        var configuration = HTTPServer.Configuration()
        configuration.maxWebSocketMessageSize = 1 << 20
        let serverSide = Guarded<UInt16?>(nil)
        try await withServer(configuration, router: Self.echoRouter(onClose: { code in serverSide.withLock { $0 = code } })) { server in
            let connection = try await WebSocketClient.connect(to: Self.url(server))
            try connection.send(.binary(Data(count: (1 << 20) + 1)))
            try await withDeadline(30) {
                for await _ in connection.messages {}
            }
            #expect(connection.closeCode == 1009)
        }
        #expect(serverSide.withLock { $0 } == 1009)
    }

    @Test func serves200ConcurrentClients() async throws {
        try await withServer(router: Self.echoRouter()) { server in
            let url = Self.url(server)
            let results = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let connection = try await WebSocketClient.connect(to: url)
                        try connection.send(.text("client \(index)"))
                        var iterator = connection.messages.makeAsyncIterator()
                        let reply = await iterator.next()
                        connection.close()
                        return reply == .text("client \(index)")
                    }
                }
                var all: [Bool] = []
                for try await result in group { all.append(result) }
                return all
            }
            #expect(results.count == 200)
            #expect(results.allSatisfy { $0 })
        }
    }

    @Test func aClientThatStopsReadingIsClosedWith1008() async throws {
        var configuration = HTTPServer.Configuration()
        configuration.maxOutgoingQueueBytes = 1 << 20
        let outcome = Guarded<(sent: Int, error: WebSocketError?, code: UInt16?)>((0, nil, nil))
        let (done, finished) = AsyncStream<Void>.makeStream()
        var router = Router()
        router.webSocket("/flood", WebSocketRoute(
            decide: { _ in .accept(subprotocol: nil) },
            onConnection: { connection, _ in
                let chunk = Data(count: 64 << 10)
                do {
                    while true {
                        try connection.send(.binary(chunk))
                        outcome.withLock { $0.sent += chunk.count }
                        await Task.yield()
                    }
                } catch {
                    outcome.withLock { $0.error = error as? WebSocketError }
                }
                await connection.waitUntilClosed()
                outcome.withLock { $0.code = connection.closeCode }
                finished.yield()
            }))
        try await withServer(configuration, router: router) { server in
            let socket = try RawSocket(port: server.port)
            socket.setReceiveBuffer(4096)
            try await socket.send("GET /flood HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
            // Never read: the server's queue fills and it must give up on this client.
            try await withDeadline(30) {
                for await _ in done { return }
            }
            let result = outcome.withLock { $0 }
            #expect(result.error == .backpressure)
            #expect(result.code == 1008)
            // Bounded: what the kernel buffers plus at most the 1 MiB queue (and one message).
            #expect(result.sent < 16 << 20)
        }
    }

    @Test func aSlowHandlerPausesTheSenderWithoutLosingMessages() async throws {
        let (go, goContinuation) = AsyncStream<Void>.makeStream()
        let received = Guarded<[Int]>([])
        let (done, doneContinuation) = AsyncStream<Void>.makeStream()
        var router = Router()
        router.webSocket("/sink", WebSocketRoute(
            decide: { _ in .accept(subprotocol: nil) },
            onConnection: { connection, _ in
                for await _ in go { break }
                for await message in connection.messages {
                    guard case .binary(let data) = message else { continue }
                    let count = received.withLock { list -> Int in
                        list.append(Int(data[0]))
                        return list.count
                    }
                    if count == 40 { doneContinuation.yield() }
                }
            }))
        try await withServer(router: router) { server in
            let connection = try await WebSocketClient.connect(
                to: Self.url(server, "/sink"), maxOutgoingQueueBytes: 64 << 20)
            // 20 MiB while the handler is not reading: the server buffers a few MiB, then stops
            // reading the socket until the handler catches up.
            for index in 0..<40 {
                try connection.send(.binary(Data(repeating: UInt8(index), count: 512 << 10)))
            }
            goContinuation.yield()
            try await withDeadline(30) {
                for await _ in done { return }
            }
            #expect(received.withLock { $0 } == Array(0..<40))
        }
    }

    @Test func shutdownClosesWebSocketsWith1001() async throws {
        let server = HTTPServer(router: Self.echoRouter())
        try server.start()
        let connection = try await WebSocketClient.connect(to: Self.url(server))
        try connection.send(.text("ping"))
        var iterator = connection.messages.makeAsyncIterator()
        #expect(await iterator.next() == .text("ping"))
        await server.shutdown()
        try await withDeadline(30) { await connection.waitUntilClosed() }
        #expect(connection.closeCode == 1001)
    }
}

extension TLSServerTests {
    @Suite("WebSocket over TLS")
    struct SecureWebSocketTests {
        @Test func echoesOverWSSWithASelfSignedCertificate() async throws {
            let certificate = try await SelfSignedCertificate.make()
            defer { certificate.remove() }
            var configuration = HTTPServer.Configuration()
            configuration.tls = certificate.tls
            try await withServer(configuration, router: WebSocketTests.echoRouter()) { server in
                let url = WebSocketTests.url(server, scheme: "wss")
                let connection = try await WebSocketClient.connect(to: url, subprotocols: ["realtime"], tls: .selfSigned)
                #expect(connection.subprotocol == "realtime")
                var iterator = connection.messages.makeAsyncIterator()
                try connection.send(.text("secret"))
                #expect(await iterator.next() == .text("secret"))
                let payload = Data(repeating: 7, count: 300_000)
                try connection.send(.binary(payload))
                #expect(await iterator.next() == .binary(payload))

                // Without permission to trust it, the self-signed certificate is refused.
                await #expect(throws: WebSocketError.self) {
                    _ = try await WebSocketClient.connect(to: url)
                }
                // Over TLS a subprotocol header beyond lws' limit cannot be replayed: 431.
                do {
                    _ = try await WebSocketClient.connect(
                        to: url, subprotocols: ["realtime", "openai-insecure-api-key." + String(repeating: "t", count: 120)], tls: .selfSigned)
                    Issue.record("expected the long subprotocol header to be refused over TLS")
                } catch let WebSocketError.connectionFailed(reason) {
                    #expect(reason.contains("431"))
                }
                // A plain-text client cannot talk to the TLS port.
                await #expect(throws: WebSocketError.self) {
                    _ = try await WebSocketClient.connect(to: WebSocketTests.url(server))
                }
            }
        }
    }
}
