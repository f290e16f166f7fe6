import Foundation
@testable import ParleyNet
import Testing

@Suite("Router, headers and subprotocol checks")
struct RouterTests {
    static let router: Router = {
        var router = Router()
        router.get("/v1/agents") { _ in .text("list") }
        router.post("/v1/agents") { _ in .text("create") }
        router.get("/v1/agents/{id}") { _ in .text("get") }
        router.delete("/v1/agents/{id}") { _ in .text("delete") }
        router.add("patch", "/v1/agents/{id}/instances/{instance}") { _ in .text("patch") }
        router.webSocket("/v1/realtime", WebSocketRoute(decide: { _ in .accept(subprotocol: nil) }, onConnection: { _, _ in }))
        return router
    }()

    @Test(arguments: [
        ("GET", "/v1/agents", "list", [:]),
        ("POST", "/v1/agents/", "create", [:]),
        ("GET", "/v1/agents/42", "get", ["id": "42"]),
        ("HEAD", "/v1/agents/42", "get", ["id": "42"]),
        ("DELETE", "//v1//agents/x", "delete", ["id": "x"]),
        ("PATCH", "/v1/agents/a/instances/b", "patch", ["id": "a", "instance": "b"]),
    ] as [(String, String, String, [String: String])])
    func matches(method: String, path: String, body: String, parameters: [String: String]) async throws {
        guard case .handler(let handler, let found) = Self.router.match(method: method, path: path) else {
            Issue.record("no handler for \(method) \(path)")
            return
        }
        #expect(found == parameters)
        let response = try await handler(HTTPRequest(method: method, path: path))
        guard case .data(let data) = response.body else { return }
        #expect(String(decoding: data, as: UTF8.self) == body)
    }

    @Test func methodNotAllowedListsTheAllowedMethods() {
        guard case .methodNotAllowed(let allowed) = Self.router.match(method: "PUT", path: "/v1/agents/1") else {
            Issue.record("expected 405")
            return
        }
        #expect(allowed == ["GET", "DELETE"])
    }

    @Test(arguments: ["/", "/v1", "/v1/agents/1/extra", "/v2/agents", "/v1/realtime"])
    func unknownPathsAreNotFound(path: String) {
        guard case .notFound = Self.router.match(method: "GET", path: path) else {
            Issue.record("expected 404 for \(path)")
            return
        }
    }

    @Test func webSocketRoutesMatchByPath() {
        #expect(Self.router.matchWebSocket(path: "/v1/realtime") != nil)
        #expect(Self.router.matchWebSocket(path: "/v1/agents") == nil)
    }

    @Test func headersAreCaseInsensitiveAndOrdered() {
        var headers: HTTPHeaders = ["Content-Type": "text/plain"]
        headers.add("X-Multi", "1")
        headers.add("x-multi", "2")
        #expect(headers["content-type"] == "text/plain")
        #expect(headers.values(for: "X-MULTI") == ["1", "2"])
        headers.set("X-Multi", "3")
        #expect(headers.values(for: "x-multi") == ["3"])
        headers.remove("CONTENT-TYPE")
        #expect(headers["Content-Type"] == nil)
        #expect(headers.count == 1)
    }

    @Test func responseHeadNeverLetsAValueSplitTheHeaderBlock() {
        let head = HTTPResponseHead.serialize(
            status: 200, headers: ["X-Evil": "a\r\nSet-Cookie: x=1", "Content-Length": "999"],
            framing: .contentLength(2), keepAlive: true)
        #expect(String(decoding: head, as: UTF8.self) == "HTTP/1.1 200 OK\r\nX-Evil: aSet-Cookie: x=1\r\nContent-Length: 2\r\n\r\n")
    }

    @Test(arguments: [
        (nil, nil, "ok"),
        ("realtime, openai-insecure-api-key.ek_1", "realtime", "ok"),
        ("openai-insecure-api-key.ek_1, realtime", "realtime", "ok"),
        ("realtime", nil, "400"),
        (nil, "realtime", "500"),
        ("chat", "realtime", "500"),
        ("realtime, " + String(repeating: "x", count: 130), "realtime", "replay"),
        (String(repeating: "y", count: 70) + ", realtime", "realtime", "replay"),
        ("parley-http, realtime", "realtime", "replay"),
        ("parley-http", "parley-http", "400"),
        (String(repeating: "z", count: 64), String(repeating: "z", count: 64), "431"),
    ] as [(String?, String?, String)])
    func subprotocolOffers(header: String?, choice: String?, expected: String) {
        let verdict = SubprotocolOffer(header: header).verdict(choosing: choice, reserved: ["parley-http", "parley-raw"])
        switch verdict {
        case .acceptable: #expect(expected == "ok")
        case .exceedsLibwebsocketsLimits: #expect(expected == "replay")
        case .refused(let response): #expect(expected == "\(response.status)")
        }
    }
}
