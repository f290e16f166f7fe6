import Foundation
import ParleyNet
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("HTTP server over real sockets")
struct HTTPServerTests {
    static func router() -> Router {
        var router = Router()
        router.get("/hello") { _ in .text("hello") }
        router.get("/v1/agents/{id}") { request in
            .json(["id": request.pathParameters["id"] ?? "", "verbose": request.query["verbose"] ?? ""])
        }
        router.get("/v1/agents/{id}/items/{item}") { request in
            .text("\(request.pathParameters["id"]!)/\(request.pathParameters["item"]!)")
        }
        router.post("/echo") { request in
            HTTPResponse(status: 201, headers: ["Content-Type": request.headers["content-type"] ?? "none"], body: .data(request.body))
        }
        router.delete("/v1/agents/{id}") { _ in HTTPResponse(status: 204) }
        router.get("/headers") { request in
            .text("\(request.headers["X-Api-Key"] ?? "-") \(request.headers["authorization"] ?? "-") \(request.remoteAddress)")
        }
        router.get("/fail") { _ in throw HTTPError(status: 409, code: "conflict", message: "Already there.") }
        router.get("/crash") { _ in throw CocoaError(.fileNoSuchFile) }
        return router
    }

    @Test func routesPathParametersAndQuery() async throws {
        try await withServer(router: Self.router()) { server in
            #expect(server.port > 0)
            let hello = try await fetch(port: server.port, path: "/hello")
            #expect(hello.status == 200)
            #expect(String(decoding: hello.body, as: UTF8.self) == "hello")

            let agent = try await fetch(port: server.port, path: "/v1/agents/a%20b?verbose=yes&x=1")
            #expect(agent.status == 200)
            let json = try JSONDecoder().decode([String: String].self, from: agent.body)
            #expect(json == ["id": "a b", "verbose": "yes"])

            let nested = try await fetch(port: server.port, path: "/v1/agents/7/items/9")
            #expect(String(decoding: nested.body, as: UTF8.self) == "7/9")

            let deleted = try await fetch("DELETE", port: server.port, path: "/v1/agents/7")
            #expect(deleted.status == 204)
        }
    }

    @Test func requestBodiesAndHeaders() async throws {
        try await withServer(router: Self.router()) { server in
            let payload = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0) })
            let echo = try await fetch("POST", port: server.port, path: "/echo", body: payload,
                                       headers: ["Content-Type": "application/octet-stream"])
            #expect(echo.status == 201)
            #expect(echo.body == payload)

            let headers = try await fetch(port: server.port, path: "/headers",
                                          headers: ["X-Api-Key": "k1", "Authorization": "Bearer t"])
            #expect(String(decoding: headers.body, as: UTF8.self) == "k1 Bearer t 127.0.0.1")
        }
    }

    @Test func errorStatuses() async throws {
        var configuration = HTTPServer.Configuration()
        configuration.maxRequestBodySize = 1000
        try await withServer(configuration, router: Self.router()) { server in
            let missing = try await fetch(port: server.port, path: "/nope")
            #expect(missing.status == 404)
            #expect(String(decoding: missing.body, as: UTF8.self).contains("\"not_found\""))

            let wrongMethod = try await fetch("PUT", port: server.port, path: "/hello", body: Data("x".utf8))
            #expect(wrongMethod.status == 405)
            #expect((wrongMethod.headers["Allow"] as? String) == "GET")

            let tooLarge = try await fetch("POST", port: server.port, path: "/echo", body: Data(count: 5000))
            #expect(tooLarge.status == 413)

            let thrown = try await fetch(port: server.port, path: "/fail")
            #expect(thrown.status == 409)
            #expect(String(decoding: thrown.body, as: UTF8.self) == #"{"error":{"code":"conflict","message":"Already there."}}"#)

            let crashed = try await fetch(port: server.port, path: "/crash")
            #expect(crashed.status == 500)

            // The server still serves after all of that.
            #expect(try await fetch(port: server.port, path: "/hello").status == 200)
        }
    }

    @Test func malformedRequestsGet400AndOthersKeepBeingServed() async throws {
        try await withServer(router: Self.router()) { server in
            let garbage = try RawSocket(port: server.port)
            try await garbage.send("THIS IS NOT HTTP\r\n\r\n")
            let reply = String(decoding: try await garbage.receiveUntilClosed(), as: UTF8.self)
            #expect(reply.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))

            let binary = try RawSocket(port: server.port)
            try await binary.send(Data([0x16, 0x03, 0x01, 0x00, 0xFF, 0x00, 0x0D, 0x0A, 0x0D, 0x0A]))
            let binaryReply = String(decoding: try await binary.receiveUntilClosed(), as: UTF8.self)
            #expect(binaryReply.isEmpty || binaryReply.hasPrefix("HTTP/1.1 400"))

            let badLength = try RawSocket(port: server.port)
            try await badLength.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: banana\r\n\r\n")
            #expect(try await badLength.receiveResponse().status == 400)

            let keepAlive = try RawSocket(port: server.port)
            for _ in 0..<3 {
                try await keepAlive.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
                let response = try await keepAlive.receiveResponse()
                #expect(response.status == 200)
                #expect(response.text == "hello")
            }
        }
    }

    /// HTTP/1.0 closes after the response unless the request asks to keep the connection.
    @Test func keepAliveFollowsTheVersionAndTheConnectionHeader() async throws {
        try await withServer(router: Self.router()) { server in
            let closing = try RawSocket(port: server.port)
            try await closing.send("GET /hello HTTP/1.0\r\n\r\n")
            let reply = String(decoding: try await closing.receiveUntilClosed(), as: UTF8.self)
            #expect(reply.hasPrefix("HTTP/1.1 200 "))
            #expect(reply.contains("\r\nConnection: close\r\n"))
            #expect(reply.hasSuffix("\r\n\r\nhello"))

            let kept = try RawSocket(port: server.port)
            for _ in 0..<2 {
                try await kept.send("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
                let response = try await kept.receiveResponse()
                #expect(response.status == 200)
                #expect(response.header("connection") == nil)
                #expect(response.text == "hello")
            }
        }
    }

    /// Requests sent back to back on one connection, before any answer: handlers that answer
    /// at once and one that suspends are all answered, in order.
    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        var router = Self.router()
        router.get("/later") { _ in await Task.detached { HTTPResponse.text("later") }.value }
        try await withServer(router: router) { server in
            let socket = try RawSocket(port: server.port)
            try await socket.send(
                "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"
                + "GET /later HTTP/1.1\r\nHost: x\r\n\r\n"
                + "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n"
                + "GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let replies = statusesAndBodies(try await socket.receiveUntilClosed())
            #expect(replies.count == 4)
            #expect(replies.prefix(2) == ["200 hello", "200 later"])
            #expect(replies.dropFirst(2).first?.hasPrefix("404 ") == true)
            #expect(replies.last == "200 hello")
        }
    }

    /// A request with a body pipelined behind another one, short or long, gets a 400 and the
    /// connection closes (libwebsockets 4.1 reads such a body from the wrong place and then
    /// spins); requests pipelined behind a body are answered; the server keeps serving.
    @Test func aPipelinedRequestWithABodyIsRefusedAndTheServerKeepsServing() async throws {
        try await withServer(router: Self.router()) { server in
            let socket = try RawSocket(port: server.port)
            try await socket.send(
                "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"
                + "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
                + "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
            let replies = statusesAndBodies(try await socket.receiveUntilClosed())
            #expect(replies.count == 2)
            #expect(replies.first == "200 hello")
            #expect(replies.last?.hasPrefix("400 {\"error\":{\"code\":\"pipelined_body\"") == true)
            let bodyFirst = try RawSocket(port: server.port)
            try await bodyFirst.send(
                "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
                + "GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(statusesAndBodies(try await bodyFirst.receiveUntilClosed()) == ["201 abc", "200 hello"])
            let long = try RawSocket(port: server.port)
            try await long.send(
                "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"
                + "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 20000\r\n\r\n" + String(repeating: "b", count: 20000))
            let longReplies = statusesAndBodies(try await long.receiveUntilClosed())
            #expect(longReplies.first == "200 hello")
            #expect(longReplies.last?.hasPrefix("400 {\"error\":{\"code\":\"pipelined_body\"") == true)
            #expect(try await fetch(port: server.port, path: "/hello").status == 200)
        }
    }

    @Test func streamedResponseFlushesEachChunk() async throws {
        let (release, releaseContinuation) = AsyncStream<Void>.makeStream()
        var router = Router()
        router.get("/hello") { _ in .text("hello") }
        router.get("/events") { _ in
            let (events, continuation) = AsyncStream<Data>.makeStream(bufferingPolicy: .unbounded)
            Task {
                continuation.yield(Data("data: first\n\n".utf8))
                for await _ in release { break }
                continuation.yield(Data("data: second\n\n".utf8))
                continuation.finish()
            }
            return .serverSentEvents(events)
        }
        try await withServer(router: router) { server in
            let socket = try RawSocket(port: server.port)
            try await socket.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
            // The first event arrives while the handler is still waiting to send the second.
            let first = String(decoding: try await socket.receive(until: "data: first\n\n"), as: UTF8.self)
            #expect(first.contains("Content-Type: text/event-stream"))
            #expect(first.contains("Transfer-Encoding: chunked"))
            releaseContinuation.yield()
            let rest = String(decoding: try await socket.receive(until: "0\r\n\r\n"), as: UTF8.self)
            #expect(rest.contains("data: second\n\n"))
            // Keep-alive still works after a chunked response.
            try await socket.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
            let next = try await socket.receiveResponse()
            #expect(next.status == 200 && next.text == "hello")
        }
    }

    @Test func clientDisconnectCancelsTheStream() async throws {
        let (terminations, terminated) = AsyncStream<Void>.makeStream()
        var router = Router()
        router.get("/forever") { _ in
            let (events, continuation) = AsyncStream<Data>.makeStream(bufferingPolicy: .unbounded)
            continuation.onTermination = { _ in terminated.yield() }
            continuation.yield(Data("data: tick\n\n".utf8))
            // A heartbeat, as SSE servers send; the server notices the disconnect at the next one.
            Task {
                while case .enqueued = continuation.yield(Data(": heartbeat\n\n".utf8)) {
                    try? await Task.sleep(for: .milliseconds(20))
                }
            }
            return .serverSentEvents(events)
        }
        try await withServer(router: router) { server in
            let port = server.port
            // URLSession client: cancel the task once the first bytes arrived.
            let task = Task {
                var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/forever")!)
                request.timeoutInterval = 30
                let delegate = FirstBytesDelegate()
                let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
                let dataTask = session.dataTask(with: request)
                dataTask.resume()
                await delegate.firstBytes()
                dataTask.cancel()
                session.invalidateAndCancel()
            }
            await task.value
            try await withDeadline(30) {
                for await _ in terminations { return }
            }
        }
    }
}

/// Signals when the first response bytes arrive.
final class FirstBytesDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let (stream, continuation) = AsyncStream<Void>.makeStream()

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        continuation.yield()
    }

    func firstBytes() async {
        for await _ in stream { return }
    }
}

/// "status body" for each response in a stream of HTTP/1.1 responses with short bodies.
private func statusesAndBodies(_ stream: Data) -> [String] {
    String(decoding: stream, as: UTF8.self).components(separatedBy: "HTTP/1.1 ").dropFirst().map { reply in
        "\(reply.prefix(3)) \(reply.components(separatedBy: "\r\n\r\n").last ?? "")"
    }
}
