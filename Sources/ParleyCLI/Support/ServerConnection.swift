import Foundation
import ParleyCore
import ParleyNet

/// A running Parley server as the CLI talks to it: its base URL and the credential to send.
struct ServerConnection: Sendable {
    /// The server's base URL, e.g. `http://127.0.0.1:8080`.
    var baseURL: URL
    /// The server secret (or a client token) sent as `Authorization: Bearer`.
    var credential: String

    /// The largest response body the CLI reads.
    static let maximumResponseBytes = 8 << 20

    /// The server at `url` (else `PARLEY_URL`, else `http://127.0.0.1:8080`) with the server secret.
    /// - Throws: `CommandFailure` when no secret can be found or `PARLEY_URL` is not a URL.
    static func resolve(_ url: URL?, context: CommandContext) throws -> ServerConnection {
        let baseURL: URL
        if let url {
            baseURL = url
        } else if let text = context.environmentValue("PARLEY_URL") {
            guard case .success(let parsed) = ValueParser.serverURL.parse(text) else {
                throw CommandFailure("PARLEY_URL '\(text)' is not an http:// or https:// URL")
            }
            baseURL = parsed
        } else {
            baseURL = URL(string: "http://127.0.0.1:8080")!
        }
        return ServerConnection(baseURL: baseURL, credential: try ServerSecretSource.secret(context))
    }

    /// The URL of `path` (which starts with `/`) on the server, with `query` items.
    func url(_ path: String, query: [URLQueryItem] = []) -> URL {
        var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false) ?? URLComponents()
        let basePath = components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path
        components.path = basePath + path
        components.queryItems = query.isEmpty ? nil : query
        return components.url ?? baseURL
    }

    /// The realtime endpoint's WebSocket URL, optionally for one agent, with Parley's own events
    /// (tool progress) turned on.
    func realtimeURL(agentID: String?) -> URL {
        let query = [URLQueryItem(name: "parley_events", value: "true")] + (agentID.map { [URLQueryItem(name: "agent", value: $0)] } ?? [])
        var components = URLComponents(url: url("/v1/realtime", query: query),
                                       resolvingAgainstBaseURL: false) ?? URLComponents()
        components.scheme = components.scheme == "https" ? "wss" : "ws"
        return components.url ?? baseURL
    }

    /// Sends a JSON request and returns the JSON answer.
    /// - Throws: `CommandFailure` saying what the server answered or why it could not be reached.
    func send(_ method: String, _ path: String, body: JSONValue? = nil) async throws -> JSONValue {
        var headers = ["Authorization": "Bearer \(credential)", "Accept": "application/json"]
        var data: Data?
        if let body {
            headers["Content-Type"] = "application/json"
            data = Data(body.jsonText.utf8)
        }
        let request = HTTPClient.Request(url: url(path), method: method, headers: headers, body: data, idleTimeout: .seconds(30))
        let response: HTTPClient.Response
        do {
            response = try await HTTPClient.shared.send(request, maxBodyBytes: Self.maximumResponseBytes)
        } catch let error as HTTPClientError {
            throw CommandFailure(unreachable: baseURL, error)
        }
        let text = String(decoding: response.body, as: UTF8.self)
        let json = try? JSONValue(parsing: text)
        guard (200..<300).contains(response.status) else {
            throw CommandFailure(status: response.status, body: json, method: method, path: path)
        }
        guard let json else {
            throw CommandFailure("the server's answer to \(method) \(path) is not JSON")
        }
        return json
    }
}

extension CommandFailure {
    /// The failure for a server that could not be reached.
    init(unreachable baseURL: URL, _ error: HTTPClientError) {
        switch error.kind {
        case .connectionFailed:
            self.init("cannot reach \(baseURL.absoluteString): \(error.message) (is 'parley serve' running?)")
        case .timedOut:
            self.init("\(baseURL.absoluteString) did not answer in time")
        default:
            self.init("talking to \(baseURL.absoluteString) failed: \(error.message)")
        }
    }

    /// The failure for an error status, with the server's `{error: {code, message}}` when present.
    init(status: Int, body: JSONValue?, method: String, path: String) {
        let message = body?["error"]?["message"]?.stringValue ?? body?["error"]?.stringValue
        let detail = message.map { ": \($0)" } ?? ""
        switch status {
        case 401:
            self.init("the server refused the credentials (HTTP 401)\(detail); check PARLEY_SERVER_SECRET")
        case 404:
            self.init("not found (HTTP 404)\(detail)")
        default:
            self.init("\(method) \(path) failed with HTTP \(status)\(detail)")
        }
    }
}
