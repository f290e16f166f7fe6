import Foundation

extension HTTPClient {
    /// An HTTP request for `HTTPClient`.
    public struct Request: Sendable {
        /// The absolute URL.
        public var url: URL
        /// The method, for example `GET` or `POST`.
        public var method: String
        /// Header fields to send, by name.
        public var headers: [String: String]
        /// The body, if any.
        public var body: Data?
        /// The transport's inactivity timeout: how long to wait for the next byte.
        public var idleTimeout: Duration
        /// Which addresses the request may connect to, for a URL a client of the server named;
        /// `nil` (any address) for URLs the operator configured. With a policy the host is
        /// resolved and every address checked before connecting, the connection goes to the
        /// checked address, and a redirect is followed only on the same host (checked again).
        public var outboundPolicy: OutboundPolicy?

        /// Creates a request.
        public init(
            url: URL,
            method: String = "GET",
            headers: [String: String] = [:],
            body: Data? = nil,
            idleTimeout: Duration = .seconds(60),
            outboundPolicy: OutboundPolicy? = nil
        ) {
            self.url = url
            self.method = method
            self.headers = headers
            self.body = body
            self.idleTimeout = idleTimeout
            self.outboundPolicy = outboundPolicy
        }
    }

    /// A complete HTTP response.
    public struct Response: Sendable {
        /// The status code.
        public var status: Int
        /// Header fields with lowercased names.
        public var headers: [String: String]
        /// The body.
        public var body: Data

        /// Creates a response.
        public init(status: Int, headers: [String: String], body: Data) {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    /// A response whose head has arrived and whose body streams in as it is received.
    public struct StreamingResponse: Sendable {
        /// The status code.
        public var status: Int
        /// Header fields with lowercased names.
        public var headers: [String: String]
        /// The body in the pieces the network delivered. Ends with an `HTTPClientError` when the
        /// connection breaks. Dropping or cancelling the iteration closes the connection.
        public var body: AsyncThrowingStream<Data, any Error>

        /// Reads the rest of the body into memory.
        /// - Parameter limit: the most bytes to accept.
        /// - Throws: `HTTPClientError` with kind `.responseTooLarge` past `limit`, or the body's error.
        public func collectBody(upTo limit: Int) async throws -> Data {
            var collected = Data()
            for try await piece in body {
                guard collected.count + piece.count <= limit else {
                    throw HTTPClientError(.responseTooLarge, message: "response body larger than \(limit) bytes")
                }
                collected.append(piece)
            }
            return collected
        }
    }
}
