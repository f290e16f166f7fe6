import Foundation

/// The body of an HTTP response: bytes known up front, or a stream sent as it is produced.
public enum HTTPResponseBody: Sendable {
    /// A complete body, sent with a `Content-Length`.
    case data(Data)
    /// A body produced over time (Server-Sent Events, for example), sent chunked and flushed
    /// chunk by chunk. If the client goes away the server stops iterating, which cancels the
    /// stream (its `onTermination` runs).
    case stream(AsyncStream<Data>)
}

/// An HTTP response a handler returns.
public struct HTTPResponse: Sendable {
    /// The status code, for example `200`.
    public var status: Int
    /// The response header fields. `Content-Length`, `Transfer-Encoding` and `Connection` are
    /// set by the server.
    public var headers: HTTPHeaders
    /// The response body.
    public var body: HTTPResponseBody

    /// Creates a response.
    public init(status: Int = 200, headers: HTTPHeaders = [], body: HTTPResponseBody = .data(Data())) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response encoding `value`; a value that cannot be encoded gives a 500 error response.
    public static func json<T: Encodable>(_ value: T, status: Int = 200, encoder: JSONEncoder = JSONEncoder()) -> HTTPResponse {
        do {
            let data = try encoder.encode(value)
            return HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: .data(data))
        } catch {
            return .error(status: 500, code: "encoding_failed", message: "The response could not be encoded: \(error)")
        }
    }

    /// A text response, UTF-8 encoded.
    public static func text(_ text: String, status: Int = 200, contentType: String = "text/plain; charset=utf-8") -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": contentType], body: .data(Data(text.utf8)))
    }

    /// A JSON error response `{"error":{"code":…,"message":…}}`.
    public static func error(status: Int, code: String, message: String) -> HTTPResponse {
        struct Envelope: Encodable {
            struct Detail: Encodable {
                var code: String
                var message: String
            }
            var error: Detail
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = (try? encoder.encode(Envelope(error: .init(code: code, message: message)))) ?? Data()
        return HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: .data(data))
    }

    /// A Server-Sent Events response streaming `events` (each element is sent as-is, so it
    /// should already be framed as `data: …\n\n`).
    public static func serverSentEvents(_ events: AsyncStream<Data>, status: Int = 200) -> HTTPResponse {
        HTTPResponse(
            status: status,
            headers: ["Content-Type": "text/event-stream", "Cache-Control": "no-cache"],
            body: .stream(events)
        )
    }
}
