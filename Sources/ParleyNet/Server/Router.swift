/// Handles one HTTP request; runs as its own task, so it may suspend freely. The task runs on the
/// server's network thread (actor-isolated code on its actor), so it must not block: heavy
/// nonisolated work belongs in `withTaskExecutorPreference(globalConcurrentExecutor)`.
public typealias HTTPHandler = @Sendable (HTTPRequest) async throws -> HTTPResponse

/// Maps method + path to handlers, and paths to WebSocket routes.
///
/// Patterns are paths whose segments are literals or `{name}` parameters:
/// ```swift
/// var router = Router()
/// router.get("/v1/agents/{id}") { request in .json(["id": request.pathParameters["id"]]) }
/// ```
/// A `HEAD` request uses the `GET` route when no `HEAD` route exists.
public struct Router: Sendable {
    private var routes: [HTTPRoute] = []
    private var webSocketRoutes: [(pattern: RoutePattern, route: WebSocketRoute)] = []

    /// Creates an empty router.
    public init() {}

    /// Adds a handler for `method` (case-insensitive) and `pattern`, for example `/v1/agents/{id}`.
    public mutating func add(_ method: String, _ pattern: String, _ handler: @escaping HTTPHandler) {
        routes.append(HTTPRoute(method: method.uppercased(), pattern: RoutePattern(pattern), handler: handler))
    }

    /// Adds a `GET` handler.
    public mutating func get(_ pattern: String, _ handler: @escaping HTTPHandler) { add("GET", pattern, handler) }
    /// Adds a `POST` handler.
    public mutating func post(_ pattern: String, _ handler: @escaping HTTPHandler) { add("POST", pattern, handler) }
    /// Adds a `PUT` handler.
    public mutating func put(_ pattern: String, _ handler: @escaping HTTPHandler) { add("PUT", pattern, handler) }
    /// Adds a `PATCH` handler.
    public mutating func patch(_ pattern: String, _ handler: @escaping HTTPHandler) { add("PATCH", pattern, handler) }
    /// Adds a `DELETE` handler.
    public mutating func delete(_ pattern: String, _ handler: @escaping HTTPHandler) { add("DELETE", pattern, handler) }

    /// Accepts WebSocket upgrades on `path` (a pattern like the HTTP ones) with `route`.
    public mutating func webSocket(_ path: String, _ route: WebSocketRoute) {
        webSocketRoutes.append((RoutePattern(path), route))
    }

    /// Finds what handles `method` on `path`.
    func match(method: String, path: String) -> RouteMatch {
        let segments = RoutePattern.segments(of: path)
        var allowed: [String] = []
        var getFallback: (HTTPHandler, [String: String])?
        for route in routes {
            guard let parameters = route.pattern.match(segments) else { continue }
            if route.method == method { return .handler(route.handler, parameters) }
            if method == "HEAD", route.method == "GET", getFallback == nil { getFallback = (route.handler, parameters) }
            if !allowed.contains(route.method) { allowed.append(route.method) }
        }
        if let getFallback { return .handler(getFallback.0, getFallback.1) }
        return allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed)
    }

    /// Finds the WebSocket route for `path`, with its path parameters.
    func matchWebSocket(path: String) -> (WebSocketRoute, [String: String])? {
        let segments = RoutePattern.segments(of: path)
        for entry in webSocketRoutes {
            if let parameters = entry.pattern.match(segments) { return (entry.route, parameters) }
        }
        return nil
    }
}

/// The outcome of looking a request up in a `Router`.
enum RouteMatch {
    case handler(HTTPHandler, [String: String])
    case methodNotAllowed(allowed: [String])
    case notFound
}

private struct HTTPRoute: Sendable {
    var method: String
    var pattern: RoutePattern
    var handler: HTTPHandler
}

/// A parsed route pattern: literal segments and `{name}` parameters.
struct RoutePattern: Sendable {
    enum Segment: Sendable, Equatable {
        case literal(Substring)
        case parameter(String)
    }

    let segments: [Segment]

    init(_ pattern: String) {
        segments = Self.segments(of: pattern).map { segment in
            if segment.hasPrefix("{"), segment.hasSuffix("}"), segment.count > 2 {
                return .parameter(String(segment.dropFirst().dropLast()))
            }
            return .literal(segment)
        }
    }

    /// The non-empty segments of a path (`/a//b/` gives `a`, `b`).
    static func segments(of path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: true)
    }

    /// The parameters when `path` matches this pattern, else `nil`.
    func match(_ path: [Substring]) -> [String: String]? {
        guard path.count == segments.count else { return nil }
        var parameters: [String: String] = [:]
        for (segment, value) in zip(segments, path) {
            switch segment {
            case .literal(let literal):
                guard literal == value else { return nil }
            case .parameter(let name):
                parameters[name] = String(value)
            }
        }
        return parameters
    }
}
