import Foundation

/// A certificate and private key for serving HTTPS and WSS.
public struct TLSConfiguration: Sendable {
    /// Path of the PEM certificate (chain).
    public var certificatePath: String
    /// Path of the PEM private key.
    public var privateKeyPath: String

    /// Creates a TLS configuration from PEM files.
    public init(certificatePath: String, privateKeyPath: String) {
        self.certificatePath = certificatePath
        self.privateKeyPath = privateKeyPath
    }
}

extension HTTPServer {
    /// How an `HTTPServer` listens and what it accepts.
    public struct Configuration: Sendable {
        /// The address to bind; loopback by default.
        public var host: String = "127.0.0.1"
        /// The port to bind; 0 picks a free one (read it from `HTTPServer.port`).
        public var port: Int = 0
        /// Larger request bodies are refused with 413.
        public var maxRequestBodySize: Int = 1 << 20
        /// Larger WebSocket messages close the connection with 1009.
        public var maxWebSocketMessageSize: Int = 16 << 20
        /// A connection whose unsent messages exceed this is closed with 1008.
        public var maxOutgoingQueueBytes: Int = 8 << 20
        /// Seconds without a pong before a WebSocket is dropped; a ping goes out at half of it.
        public var webSocketIdleTimeout: Int = 60
        /// Seconds `shutdown()` waits for in-flight requests before cutting them off.
        public var shutdownGracePeriod: Double = 10
        /// Serve files from this folder for `GET`/`HEAD` requests no route matches.
        public var staticRoot: URL?
        /// Serve HTTPS/WSS with this certificate.
        public var tls: TLSConfiguration?
        /// Header names libwebsockets does not know that requests should still carry (lws only
        /// reports unknown headers by name). Common OpenAI and proxy headers are included.
        public var additionalRequestHeaders: [String] = [
            "openai-beta", "openai-organization", "openai-project", "x-api-key", "x-request-id",
            "x-client-request-id", "idempotency-key", "x-forwarded-proto", "x-forwarded-host",
            "sec-fetch-site", "sec-fetch-mode",
        ]

        /// Creates a configuration; every parameter has the default described on its property.
        public init(
            host: String = "127.0.0.1",
            port: Int = 0,
            maxRequestBodySize: Int = 1 << 20,
            maxWebSocketMessageSize: Int = 16 << 20,
            maxOutgoingQueueBytes: Int = 8 << 20,
            webSocketIdleTimeout: Int = 60,
            staticRoot: URL? = nil,
            tls: TLSConfiguration? = nil
        ) {
            self.host = host
            self.port = port
            self.maxRequestBodySize = maxRequestBodySize
            self.maxWebSocketMessageSize = maxWebSocketMessageSize
            self.maxOutgoingQueueBytes = maxOutgoingQueueBytes
            self.webSocketIdleTimeout = webSocketIdleTimeout
            self.staticRoot = staticRoot
            self.tls = tls
        }
    }
}
