/// What the server does with a WebSocket upgrade request.
public enum WebSocketUpgradeDecision: Sendable {
    /// Upgrade; answer with `subprotocol`, which must be one the client offered in
    /// `Sec-WebSocket-Protocol` (or `nil` when the client offered none).
    case accept(subprotocol: String?)
    /// Refuse with this HTTP response (for example 401) instead of upgrading.
    case reject(HTTPResponse)
}

/// A WebSocket endpoint: a synchronous upgrade decision and a handler for the connection.
///
/// ```swift
/// router.webSocket("/v1/realtime", WebSocketRoute(
///     decide: { request in request.headers["Authorization"] == nil ? .reject(.error(status: 401, code: "unauthorized", message: "No token")) : .accept(subprotocol: nil) },
///     onConnection: { connection, request in
///         for await message in connection.messages { try? connection.send(message) }
///     }))
/// ```
public struct WebSocketRoute: Sendable {
    /// Called on the server's service thread before the upgrade: it must be cheap and must
    /// not block. It sees the request line and headers (no body).
    public let decide: @Sendable (HTTPRequest) -> WebSocketUpgradeDecision
    /// Runs for the connection's lifetime; when it returns the socket closes with 1000. When
    /// the socket closes first, the task running it is cancelled and `messages` ends. The task
    /// prefers the server's network thread, like HTTP handlers (see `HTTPHandler`).
    public let onConnection: @Sendable (WebSocketConnection, HTTPRequest) async -> Void

    /// Creates a route from an upgrade decision and a connection handler.
    public init(
        decide: @escaping @Sendable (HTTPRequest) -> WebSocketUpgradeDecision,
        onConnection: @escaping @Sendable (WebSocketConnection, HTTPRequest) async -> Void
    ) {
        self.decide = decide
        self.onConnection = onConnection
    }
}
