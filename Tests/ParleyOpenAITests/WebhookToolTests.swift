import Foundation
import ParleyCore
import ParleyNet
import ParleyTesting
import Testing
@testable import ParleyOpenAI

/// The last request a webhook endpoint received.
final class WebhookRequestBox: @unchecked Sendable {  // `lock` guards `request`.
    private let lock = NSLock()
    private var request: HTTPRequest?

    func set(_ value: HTTPRequest) { lock.withLock { request = value } }
    var value: HTTPRequest? { lock.withLock { request } }
}

@Suite struct WebhookToolTests {
    static let schema: JSONValue = ["type": "object", "properties": ["city": ["type": "string"]], "required": ["city"]]

    static func startServer(_ received: WebhookRequestBox) throws -> HTTPServer {
        var router = Router()
        router.post("/hooks/weather") { request in
            received.set(request)
            return .text("Sunny, 21 °C")
        }
        router.post("/hooks/broken") { _ in .error(status: 500, code: "db_down", message: "database unavailable") }
        router.post("/hooks/slow") { _ in
            try await Task.sleep(for: .seconds(60))
            return .text("late")
        }
        var configuration = HTTPServer.Configuration(port: 0)
        configuration.additionalRequestHeaders.append("x-webhook-secret")
        configuration.shutdownGracePeriod = 0.5
        let server = HTTPServer(configuration: configuration, router: router)
        try server.start()
        return server
    }

    static func tool(_ server: HTTPServer, path: String, timeout: Double = 5) -> WebhookTool {
        tool(port: server.port, path: path, timeout: timeout)
    }

    static func tool(port: Int, path: String, timeout: Double = 5) -> WebhookTool {
        WebhookTool(configuration: WebhookToolConfiguration(
            name: "get_weather",
            description: "Weather for a city.",
            parameters: schema,
            url: URL(string: "http://127.0.0.1:\(port)\(path)")!,
            headers: ["X-Webhook-Secret": "s3cret"],
            timeoutSeconds: timeout
        ))
    }

    @Test func postsTheArgumentsAsJSONAndReturnsTheResponseText() async throws {
        let received = WebhookRequestBox()
        let server = try Self.startServer(received)
        let registry = ToolRegistry([Self.tool(server, path: "/hooks/weather")])
        let result = await registry.execute(ToolCall(id: "1", name: "get_weather", arguments: #"{"city":"Lyon"}"#), timeout: .seconds(10))
        #expect(result == ToolResult(output: "Sunny, 21 °C", isError: false))
        let request = try #require(received.value)
        #expect(try request.decodeJSON(JSONValue.self) == ["city": "Lyon"])
        #expect(request.headers["content-type"] == "application/json")
        #expect(request.headers["x-webhook-secret"] == "s3cret")
        await server.shutdown()
    }

    @Test func anErrorStatusBecomesAToolError() async throws {
        let server = try Self.startServer(WebhookRequestBox())
        await #expect { () async throws -> Void in
            _ = try await Self.tool(server, path: "/hooks/broken").call(arguments: ["city": "Lyon"])
        } throws: { error in
            (error as? ToolError)?.message.hasPrefix("the webhook at 127.0.0.1 answered HTTP 500: {") == true
        }
        await server.shutdown()
    }

    @Test func aSlowEndpointTimesOut() async throws {
        let server = try Self.startServer(WebhookRequestBox())
        await #expect(throws: ToolError("the webhook at 127.0.0.1 did not answer within 0.1 s")) {
            _ = try await Self.tool(server, path: "/hooks/slow", timeout: 0.1).call(arguments: ["city": "Lyon"])
        }
        await server.shutdown()
    }

    @Test func anUnreachableEndpointIsAToolError() async throws {
        // A port held bound but not listening: a stopped server's port could be handed to
        // another test's server meanwhile.
        let closed = try ClosedPort()
        let tool = Self.tool(port: closed.port, path: "/hooks/weather")
        await #expect(throws: ToolError("the webhook at 127.0.0.1 could not be reached (connectionFailed)")) {
            _ = try await tool.call(arguments: ["city": "Lyon"])
        }
    }

    @Test func configurationRoundTripsAsJSON() throws {
        let configuration = WebhookToolConfiguration(
            name: "n", description: "d", parameters: Self.schema, url: URL(string: "https://example.com/x")!, headers: ["A": "b"], timeoutSeconds: 3
        )
        let decoded = try JSONDecoder().decode(WebhookToolConfiguration.self, from: JSONEncoder().encode(configuration))
        #expect(decoded == configuration)
    }
}
