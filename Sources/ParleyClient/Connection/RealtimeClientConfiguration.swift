import Foundation
import ParleyCore

extension RealtimeClient {
    /// Fetches a fresh client token; called before connecting whenever the cached one is
    /// missing, near its expiry, or was refused. Throw a `ProviderError` that is not retryable
    /// (for example `.authentication`) to stop reconnecting; any other error is retried with
    /// backoff.
    public typealias TokenProvider = @Sendable () async throws -> RealtimeToken

    /// Where and how a realtime client connects.
    public struct Configuration: Sendable {
        /// The realtime endpoint, `ws://…/v1/realtime` or `wss://…`, with any `?agent=` or
        /// `?instance=` query.
        public var url: URL
        /// The event shapes to speak: GA by default, beta sends `OpenAI-Beta: realtime=v1`.
        public var dialect: RealtimeDialect
        /// The waits between reconnection attempts.
        public var backoff: ReconnectBackoff
        /// How long a connection may take to deliver `session.created`.
        public var sessionStartTimeout: Duration
        /// A cached token is fetched anew when it expires within this many seconds.
        public var tokenRefreshMargin: TimeInterval
        /// Larger incoming messages close the connection.
        public var maxMessageSize: Int

        /// Creates a configuration for the endpoint at `url`.
        public init(
            url: URL, dialect: RealtimeDialect = .ga, backoff: ReconnectBackoff = .standard,
            sessionStartTimeout: Duration = .seconds(10), tokenRefreshMargin: TimeInterval = 60,
            maxMessageSize: Int = 16 << 20
        ) {
            self.url = url
            self.dialect = dialect
            self.backoff = backoff
            self.sessionStartTimeout = sessionStartTimeout
            self.tokenRefreshMargin = tokenRefreshMargin
            self.maxMessageSize = maxMessageSize
        }

        /// A configuration for the Parley server at `server` (its `http://` or `https://` base
        /// URL): the realtime endpoint with an optional agent or agent instance, asking for
        /// Parley's own events (live transcript replacements, tool progress, turn metrics).
        ///
        /// ```swift
        /// let configuration = RealtimeClient.Configuration(server: URL(string: "http://127.0.0.1:8080")!)
        /// ```
        public init(server: URL, agentID: String? = nil, instanceID: String? = nil) {
            var components = URLComponents(url: server, resolvingAgainstBaseURL: false) ?? URLComponents()
            switch components.scheme?.lowercased() {
            case "https", "wss": components.scheme = "wss"
            default: components.scheme = "ws"
            }
            let base = components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path
            components.path = base + "/v1/realtime"
            var query = [URLQueryItem(name: "parley_events", value: "true")]
            if let agentID { query.append(URLQueryItem(name: "agent", value: agentID)) }
            if let instanceID { query.append(URLQueryItem(name: "instance", value: instanceID)) }
            components.queryItems = query
            self.init(url: components.url ?? server)
        }
    }
}
