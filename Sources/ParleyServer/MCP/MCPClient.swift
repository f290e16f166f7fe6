import Foundation
import ParleyCore
import ParleyNet

/// A client of one MCP server over the Streamable HTTP transport (MCP 2025-06-18): JSON-RPC 2.0
/// messages POSTed to the server's URL, answered as `application/json` or as a
/// `text/event-stream` carrying notifications before the answer.
///
/// The first request opens a session (`initialize`, then `notifications/initialized`); the
/// server's `Mcp-Session-Id` and the negotiated protocol version go with every later request,
/// and a session the server has forgotten (404) is opened again once. A GET stream carries the
/// server's own notifications: `notifications/tools/list_changed` comes out of
/// `toolListChanges`. The bearer token from the configuration is sent, never logged or shown.
///
/// A server a client named (rather than the operator) gets an `outboundPolicy`: every request
/// to it then connects only to addresses the policy permits (see `HTTPClient.Request.outboundPolicy`).
/// Errors say what failed without quoting what the server sent back, except for JSON-RPC error
/// messages and tool output, which are MCP's own way of answering.
///
/// ```swift
/// let client = MCPClient(configuration: MCPServerConfiguration(label: "shop", url: url, requireApproval: .never))
/// let tools = try await client.listTools()
/// let text = try await client.callTool("lookup_order", arguments: ["order_id": "A-17"])
/// await client.close()
/// ```
public actor MCPClient {
    /// The protocol version asked for in `initialize`.
    public static let protocolVersion = "2025-06-18"
    /// The most pages of `tools/list` read (a server whose cursor never ends is cut off there).
    static let maximumPages = 100
    /// The most bytes of one JSON answer.
    static let maximumAnswerBytes = 8 << 20
    /// The most tools taken from one server.
    static let maximumTools = 512

    /// The server's settings.
    public nonisolated let configuration: MCPServerConfiguration
    /// Which addresses requests to the server may connect to; `nil` for any (the operator's servers).
    public nonisolated let outboundPolicy: OutboundPolicy?
    /// One element each time the server says its tool list changed.
    public nonisolated let toolListChanges: AsyncStream<Void>
    private let toolListChanged: AsyncStream<Void>.Continuation
    private let http: HTTPClient
    private var sessionID: String?
    private var negotiatedVersion: String?
    private var initialization: Task<Void, any Error>?
    private var notificationListener: Task<Void, Never>?
    private var nextRequestID = 1

    /// Creates a client; nothing is sent until the first request.
    public init(configuration: MCPServerConfiguration, outboundPolicy: OutboundPolicy? = nil, http: HTTPClient = .shared) {
        self.configuration = configuration
        self.outboundPolicy = outboundPolicy
        self.http = http
        (toolListChanges, toolListChanged) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// The tools the server offers, following `nextCursor` across pages: the first
    /// `maximumTools` whose names a model can call (1–64 letters, digits, `_` or `-`).
    /// - Throws: `MCPFailure`, or `CancellationError`.
    public func listTools() async throws -> [MCPToolDescription] {
        var tools: [MCPToolDescription] = []
        var cursor: String?
        for _ in 0..<Self.maximumPages {
            let result = try await request("tools/list", params: cursor.map { .object(["cursor": .string($0)]) } ?? .object([:]))
            guard case .array(let entries)? = result["tools"] else { throw MCPFailure.garbage(label, "tools/list returned no tools array") }
            for entry in entries {
                guard let name = entry["name"]?.stringValue, !name.isEmpty else { throw MCPFailure.garbage(label, "a listed tool has no name") }
                guard Self.isCallableName(name), tools.count < Self.maximumTools else { continue }
                let schema: JSONValue = if case .object? = entry["inputSchema"] { entry["inputSchema"]! } else { .object(["type": .string("object")]) }
                tools.append(MCPToolDescription(
                    name: name, description: entry["description"]?.stringValue, inputSchema: schema, annotations: entry["annotations"]
                ))
            }
            guard let next = result["nextCursor"]?.stringValue, !next.isEmpty else { return tools }
            cursor = next
        }
        return tools
    }

    /// Calls tool `name` and returns the text of its content.
    /// - Throws: `MCPFailure` (`tool_execution_error` when the tool reports `isError`), or
    ///   `CancellationError`.
    public func callTool(_ name: String, arguments: JSONValue) async throws -> String {
        // A progress token asks the server for `notifications/progress`, whose messages the agent may say.
        let params: JSONValue = .object([
            "name": .string(name), "arguments": arguments, "_meta": .object(["progressToken": .string(UUID().uuidString)]),
        ])
        let result = try await request("tools/call", params: params)
        let text = Self.text(of: result)
        if result["isError"]?.boolValue == true {
            throw MCPFailure(.toolExecution, message: text.isEmpty ? "\(name) failed without saying why" : text)
        }
        return text
    }

    /// Ends the session: stops listening and tells the server (`DELETE`), best effort.
    public func close() async {
        notificationListener?.cancel()
        notificationListener = nil
        initialization?.cancel()
        initialization = nil
        toolListChanged.finish()
        guard let sessionID else { return }
        self.sessionID = nil
        let request = HTTPClient.Request(
            url: configuration.url, method: "DELETE", headers: headers(session: sessionID), idleTimeout: .seconds(2), outboundPolicy: outboundPolicy
        )
        _ = try? await http.send(request, maxBodyBytes: 4096)
    }

    // MARK: - Requests

    private var label: String { configuration.label }

    /// Sends a request in the open session (opening one first), and once more in a new
    /// session when the server no longer knows the old one.
    private func request(_ method: String, params: JSONValue) async throws -> JSONValue {
        try await ensureSession()
        do {
            return try await exchange(method, params: params)
        } catch let failure as MCPFailure where failure.kind == .http && failure.code == 404 && sessionID != nil {
            forgetSession()
            try await ensureSession()
            return try await exchange(method, params: params)
        }
    }

    /// Opens the session once, however many requests ask at the same time.
    private func ensureSession() async throws {
        if initialization == nil {
            initialization = Task { try await self.openSession() }
        }
        do {
            try await initialization!.value
        } catch {
            initialization = nil
            throw error
        }
    }

    private func openSession() async throws {
        let result = try await exchange("initialize", params: .object([
            "protocolVersion": .string(Self.protocolVersion),
            "capabilities": .object([:]),
            "clientInfo": .object(["name": .string("parley"), "version": .string("1.0")]),
        ]))
        guard let version = result["protocolVersion"]?.stringValue else {
            throw MCPFailure.garbage(label, "initialize returned no protocolVersion")
        }
        negotiatedVersion = version
        try await notify("notifications/initialized")
        startListening()
    }

    private func forgetSession() {
        notificationListener?.cancel()
        notificationListener = nil
        sessionID = nil
        negotiatedVersion = nil
        initialization = nil
    }

    /// POSTs one request and waits for its answer.
    private func exchange(_ method: String, params: JSONValue) async throws -> JSONValue {
        let id = nextRequestID
        nextRequestID += 1
        let message = JSONValue.object(["jsonrpc": .string("2.0"), "id": .number(Double(id)), "method": .string(method), "params": params])
        let response = try await post(message)
        try checkStatus(response, method: method)
        if method == "initialize", let session = response.headers["mcp-session-id"], !session.isEmpty { sessionID = session }
        let contentType = response.headers["content-type"]?.lowercased() ?? ""
        if contentType.hasPrefix("text/event-stream") {
            return try await answer(id: id, method: method, fromStream: response.body)
        }
        let body: Data
        do {
            body = try await response.collectBody(upTo: Self.maximumAnswerBytes)
        } catch {
            throw try Self.bodyFailure(label, method, error)
        }
        let messages: [JSONValue]
        switch try? JSONValue(parsing: String(decoding: body, as: UTF8.self)) {
        case .array(let batch)?: messages = batch
        case let single?: messages = [single]
        case nil: throw MCPFailure.garbage(label, "\(method) answered with something that is not JSON")
        }
        for message in messages {
            if let answer = try take(message, answering: id) { return answer }
        }
        throw MCPFailure.garbage(label, "\(method) answered without a JSON-RPC response for it")
    }

    /// POSTs a notification (the server answers 202 with no body).
    private func notify(_ method: String) async throws {
        let response = try await post(.object(["jsonrpc": .string("2.0"), "method": .string(method)]))
        try checkStatus(response, method: method)
        _ = try? await response.collectBody(upTo: 64 << 10)
    }

    private func post(_ message: JSONValue) async throws -> HTTPClient.StreamingResponse {
        var headers = headers(session: sessionID)
        headers["Content-Type"] = "application/json"
        headers["Accept"] = "application/json, text/event-stream"
        let request = HTTPClient.Request(
            url: configuration.url, method: "POST", headers: headers, body: Data(message.jsonText.utf8), idleTimeout: .seconds(300),
            outboundPolicy: outboundPolicy
        )
        do {
            return try await http.stream(request)
        } catch is CancellationError {
            throw CancellationError()
        } catch let error as HTTPClientError where error.kind == .addressRefused {
            throw MCPFailure(.http, code: 403, message: "MCP server \"\(label)\" URL refused: \(error.message); an operator can allow it with PARLEY_OUTBOUND_ALLOW")
        } catch let error as HTTPClientError where error.kind == .redirectRefused {
            throw MCPFailure(.http, code: 403, message: "MCP server \"\(label)\" URL refused: \(error.message)")
        } catch {
            throw MCPFailure.unreachable(label, error)
        }
    }

    /// The headers of every request: the configured ones, the bearer token, the session.
    private func headers(session: String?) -> [String: String] {
        var headers = configuration.headers
        if let token = configuration.authorization { headers["Authorization"] = "Bearer \(token)" }
        if let session { headers["Mcp-Session-Id"] = session }
        if let negotiatedVersion { headers["MCP-Protocol-Version"] = negotiatedVersion }
        return headers
    }

    /// Throws an `http_error` for a status outside 2xx (the body, whatever it says, is dropped).
    private func checkStatus(_ response: HTTPClient.StreamingResponse, method: String) throws {
        guard !(200..<300).contains(response.status) else { return }
        throw MCPFailure(.http, code: response.status, message: "MCP server \"\(label)\" answered \(method) with HTTP \(response.status)")
    }

    /// Reads an SSE answer: notifications are handled as they come, until the response to `id`.
    private func answer(id: Int, method: String, fromStream body: AsyncThrowingStream<Data, any Error>) async throws -> JSONValue {
        var parser = ServerSentEventParser()
        do {
            for try await piece in body {
                for event in try parser.push(piece) {
                    guard let message = try? JSONValue(parsing: event.data) else {
                        throw MCPFailure.garbage(label, "an event of the \(method) stream is not JSON")
                    }
                    if let answer = try take(message, answering: id) { return answer }
                }
            }
        } catch let failure as MCPFailure {
            throw failure
        } catch {
            throw try Self.bodyFailure(label, method, error)
        }
        throw MCPFailure(.http, code: 502, message: "MCP server \"\(label)\" closed the \(method) stream without answering")
    }

    /// The result when `message` answers request `id`; notifications are handled and give `nil`.
    private func take(_ message: JSONValue, answering id: Int) throws -> JSONValue? {
        if let method = message["method"]?.stringValue {
            if message["id"] == nil { handleNotification(method, params: message["params"]) }
            return nil
        }
        guard message["id"]?.numberValue == Double(id) || message["id"]?.stringValue == String(id) else { return nil }
        if let error = message["error"] {
            let code = error["code"]?.numberValue.map { Int($0) } ?? -32603
            let text = error["message"]?.stringValue ?? "no message"
            throw MCPFailure(.protocolError, code: code, message: "MCP server \"\(label)\" returned error \(code): \(text)")
        }
        guard let result = message["result"], case .object = result else {
            throw MCPFailure.garbage(label, "a response without a result object")
        }
        return result
    }

    private func handleNotification(_ method: String, params: JSONValue?) {
        switch method {
        case "notifications/tools/list_changed":
            toolListChanged.yield(())
        case "notifications/progress":
            // Runs in the task of the tool call the stream answers, where the agent listens.
            if let message = params?["message"]?.stringValue { ToolProgress.report(message) }
        default:
            break
        }
    }

    // MARK: - Server notifications

    /// Opens the GET stream the server sends its own notifications on; a server without one
    /// (405) is fine, and a stream that breaks is not reopened until the next session.
    private func startListening() {
        notificationListener?.cancel()
        var headers = headers(session: sessionID)
        headers["Accept"] = "text/event-stream"
        let request = HTTPClient.Request(
            url: configuration.url, method: "GET", headers: headers, idleTimeout: .seconds(24 * 60 * 60), outboundPolicy: outboundPolicy
        )
        let http = http
        let changed = toolListChanged
        notificationListener = Task {
            guard let response = try? await http.stream(request), response.status == 200 else { return }
            var parser = ServerSentEventParser()
            do {
                for try await piece in response.body {
                    for event in try parser.push(piece) {
                        if (try? JSONValue(parsing: event.data))?["method"]?.stringValue == "notifications/tools/list_changed" {
                            changed.yield(())
                        }
                    }
                }
            } catch {}
        }
    }

    // MARK: - Helpers

    /// The text of a `tools/call` result: its text parts, one per line; other parts named.
    static func text(of result: JSONValue) -> String {
        guard case .array(let content)? = result["content"] else {
            return result["structuredContent"]?.jsonText ?? ""
        }
        return content.map { part in
            switch part["type"]?.stringValue {
            case "text": part["text"]?.stringValue ?? ""
            case "resource": part["resource"]?["text"]?.stringValue ?? "[resource \(part["resource"]?["uri"]?.stringValue ?? "")]"
            case let other: "[\(other ?? "unknown") content]"
            }
        }.joined(separator: "\n")
    }

    /// Whether a model can call a tool by `name` (OpenAI's function name rule).
    static func isCallableName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count) && name.unicodeScalars.allSatisfy {
            ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || $0 == "_" || $0 == "-"
        }
    }

    /// The failure for a body that broke off: the server went away mid-answer.
    private static func bodyFailure(_ label: String, _ method: String, _ error: any Error) throws -> MCPFailure {
        if error is CancellationError { throw error }
        if let client = error as? HTTPClientError, client.kind == .responseTooLarge {
            return MCPFailure.garbage(label, "the \(method) answer is larger than \(maximumAnswerBytes) bytes")
        }
        return MCPFailure(.http, code: 502, message: "MCP server \"\(label)\" dropped the connection during \(method): \(error)")
    }
}
