import Foundation
import ParleyCore
import ParleyServer
import Testing

/// The HTTP surface of a real `ParleyApp` under hostile clients, over raw sockets: path
/// traversal out of the web root, oversize headers and bodies, slow-loris connections, and the
/// per-address limit on minting tokens.
@Suite("Security: HTTP limits")
struct SecurityHTTPTests {
    /// A web root with a page, and symlinks that point out of it.
    struct WebRoot {
        let url: URL

        init() throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("parley-webroot-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url.appendingPathComponent("js"), withIntermediateDirectories: true)
            try Data("<h1>Parley</h1>".utf8).write(to: url.appendingPathComponent("index.html"))
            try Data("console.log(1)".utf8).write(to: url.appendingPathComponent("js/app.js"))
            try FileManager.default.createSymbolicLink(atPath: url.appendingPathComponent("passwd").path, withDestinationPath: "/etc/passwd")
            try FileManager.default.createSymbolicLink(atPath: url.appendingPathComponent("etc").path, withDestinationPath: "/etc")
        }

        func remove() { try? FileManager.default.removeItem(at: url) }
    }

    @Test("static files never leave the web root")
    func pathTraversalIsRefused() async throws {
        let root = try WebRoot()
        defer { root.remove() }
        let server = try TestServer.start { $0.webRoot = root.url }
        let served = try await HTTPRequestSender.send(server, "GET", "/js/app.js", headers: [:])
        #expect(served.status == 200 && served.text.contains("console.log(1)"))
        let attempts = [
            "/../../../../etc/passwd", "/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "/%252e%252e/%252e%252e/etc/passwd",
            "/..%2f..%2f..%2fetc%2fpasswd", "/.%2e/.%2e/.%2e/etc/passwd", "/js/../../../etc/passwd", "/passwd", "/etc/passwd",
            "/etc/hostname", "/js/%2e%2e/passwd", "/index.html%00.js", "/..\\..\\..\\etc\\passwd", "/%5c..%5c..%5cetc%5cpasswd",
            "//etc/passwd", "/~root/.bashrc", "/js/app.js/../../passwd", "/%c0%ae%c0%ae/%c0%ae%c0%ae/etc/passwd",
        ]
        for target in attempts {
            let response = try await HTTPRequestSender.send(server, "GET", target, headers: [:])
            #expect([400, 403, 404].contains(response.status) || response.status == 0, "\(target) answered \(response.status)")
            #expect(!response.text.contains("root:x:0:0") && !response.text.contains("root:*:"), "\(target) served /etc/passwd")
        }
        #expect(try await HTTPRequestSender.send(server, "GET", "/healthz", headers: [:]).status == 200)
        await server.stop()
    }

    @Test("oversize headers and bodies are refused and the server keeps serving")
    func oversizeRequestsAreRefused() async throws {
        let server = try TestServer.start()
        let auth = ["Authorization": "Bearer \(server.secret)", "Content-Type": "application/json"]
        let hugeHeader = try await HTTPRequestSender.send(server, "GET", "/healthz", headers: ["X-Big": String(repeating: "a", count: 40_000)])
        #expect(hugeHeader.status != 200, "a 40 KB header was accepted")
        let manyHeaders = Dictionary(uniqueKeysWithValues: (0..<2_000).map { ("X-H\($0)", "v") })
        #expect(try await HTTPRequestSender.send(server, "GET", "/healthz", headers: manyHeaders).status != 200, "2,000 headers were accepted")
        let longPath = try await HTTPRequestSender.send(server, "GET", "/" + String(repeating: "p", count: 40_000), headers: [:])
        #expect(longPath.status != 200)

        let claimed = try await HTTPRequestSender.send(server, "POST", "/v1/agents", headers: auth.merging(["Content-Length": "99999999999999"]) { $1 })
        #expect(claimed.status == 413, "a claimed 100 TB body got \(claimed.status)")
        let big = String(repeating: " ", count: 2 << 20)
        let sent = try await HTTPRequestSender.send(server, "POST", "/v1/agents", headers: auth, body: #"{"name":"x"}"# + big)
        #expect(sent.status == 413 || sent.status == 0, "a 2 MB body got \(sent.status)")
        let chunked = try await RawConnection.connect(port: server.port)
        await chunked.send("POST /v1/agents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(server.secret)\r\nTransfer-Encoding: chunked\r\n\r\n")
        for _ in 0..<40 where await chunked.send("10000\r\n" + String(repeating: " ", count: 0x10000) + "\r\n") {}
        let chunkedResponse = await chunked.readResponse()
        // lws refuses chunked request bodies outright (411); a server that took them must stop at the limit (413).
        #expect(chunkedResponse == nil || [411, 413].contains(chunkedResponse?.status), "a 2.5 MB chunked body got \(chunkedResponse?.status ?? 0)")

        #expect(try await HTTPRequestSender.send(server, "GET", "/healthz", headers: [:]).status == 200)
        #expect(try await server.request("POST", "/v1/agents", json: #"{"name":"Still here"}"#).status == 201)
        await server.stop()
    }

    /// How a slow-loris client behaves.
    enum SlowClient: String, CaseIterable, CustomStringConvertible, Sendable {
        case silent = "connects and sends nothing"
        case headerTrickle = "trickles the request head, a byte a second"
        case bodyStall = "sends the head and one body byte, then nothing"
        case bodyTrickle = "trickles the body, a byte a second"

        var description: String { rawValue }
    }

    /// How long the server may keep a slow client: lws' idle and content timeouts (10 s, 5 s) and
    /// the server's body deadline (`HTTPExchange.bodyGrace`, 10 s), plus room for a loaded machine.
    static let slowClientLimit: Double = 30

    @Test("slow-loris connections are cut off and do not starve other clients", arguments: SlowClient.allCases)
    func slowClientsAreCutOff(_ behaviour: SlowClient) async throws {
        let server = try TestServer.start()
        let body = #"{"name":"slow"}"#
        let connections = try await withThrowingTaskGroup(of: RawConnection.self) { group in
            for _ in 0..<20 { group.addTask { try await RawConnection.connect(port: server.port) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let started = ContinuousClock.now
        let closed = await withTaskGroup(of: Bool.self) { group in
            for connection in connections {
                group.addTask { await Self.actSlowly(behaviour, on: connection, secret: server.secret, body: body) }
            }
            // Meanwhile, ordinary requests are served at once.
            let answered = try? await server.request("GET", "/v1/agents")
            #expect(answered?.status == 200)
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        let elapsed = (ContinuousClock.now - started).elapsedSeconds
        #expect(closed == connections.count, "\(behaviour): \(connections.count - closed) of \(connections.count) connections still open after \(Int(elapsed)) s")
        print("slow-loris\t\(behaviour)\t\(closed)/\(connections.count) closed\t\(String(format: "%.1f", elapsed)) s")
        await server.stop()
    }

    /// Behaves like a slow client on `connection`; returns whether the server closed it within `slowClientLimit`.
    static func actSlowly(_ behaviour: SlowClient, on connection: RawConnection, secret: String, body: String) async -> Bool {
        // A trickled body is long enough never to complete while the test watches.
        let length = behaviour == .bodyTrickle ? 4_096 : body.utf8.count
        let head = "POST /v1/agents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(secret)\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(length)\r\n"
        let deadline = ContinuousClock.now + .seconds(slowClientLimit)
        switch behaviour {
        case .silent:
            return await connection.readUntilClosed(seconds: slowClientLimit).closed
        case .bodyStall:
            await connection.send(head + "\r\n" + body.prefix(1))
            return await connection.readUntilClosed(seconds: slowClientLimit).closed
        case .headerTrickle, .bodyTrickle:
            let trickled = behaviour == .headerTrickle ? Array(head.utf8) : Array(repeating: UInt8(ascii: " "), count: length)
            if behaviour == .bodyTrickle { await connection.send(head + "\r\n") }
            // Neither the head (about 150 bytes) nor the body completes within the limit.
            for byte in trickled where ContinuousClock.now < deadline {
                guard await connection.send([byte]) else { return true }
                if await connection.readUntilClosed(seconds: 1).closed { return true }
            }
            return false
        }
    }

    @Test("token minting is limited per client address")
    func mintingIsRateLimitedPerAddress() async throws {
        // One a minute: the bucket refills one token a minute, so a slow run of this test (a busy
        // machine) cannot refill it before the last refused request.
        let server = try TestServer.start { $0.tokenMintsPerMinute = 1 }
        let mint = #"{"user":"ada"}"#
        let headers = ["Authorization": "Bearer \(server.secret)", "Content-Type": "application/json"]
        #expect(try await Self.post(server, "/v1/tokens", mint, headers, from: "127.0.0.1").status == 201)
        let limited = try await Self.post(server, "/v1/tokens", mint, headers, from: "127.0.0.1")
        #expect(limited.status == 429 && limited.text.lowercased().contains("retry-after: 60"))
        // Headers a proxy would set do not reset the limit.
        let spoofed = try await Self.post(server, "/v1/tokens", mint, headers.merging(["X-Forwarded-For": "203.0.113.9", "X-Real-IP": "203.0.113.9"]) { $1 }, from: "127.0.0.1")
        #expect(spoofed.status == 429)
        let secretsRoute = try await Self.post(server, "/v1/realtime/client_secrets", "{}", headers, from: "127.0.0.1")
        #expect(secretsRoute.status == 429, "the OpenAI-shaped route shares the limit")
        let localRoute = try await Self.post(server, "/v1/local/token", "", [:], from: "127.0.0.1")
        #expect(localRoute.status == 429, "the local route shares the limit")
        // Another address has its own budget.
        #expect(try await Self.post(server, "/v1/tokens", mint, headers, from: "127.0.0.2").status == 201)
        await server.stop()
    }

    static func post(_ server: TestServer, _ path: String, _ body: String, _ headers: [String: String], from address: String) async throws -> (status: Int, text: String) {
        let connection = try await RawConnection.connect(port: server.port, from: address)
        var request = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        await connection.send(request + "\r\n" + body)
        return await connection.readResponse() ?? (0, "")
    }
}
