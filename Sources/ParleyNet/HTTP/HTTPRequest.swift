import Foundation

/// An HTTP request as the server received it, body included.
public struct HTTPRequest: Sendable {
    /// The method in upper case, for example `GET`.
    public var method: String
    /// The percent-decoded path without the query, for example `/v1/agents/42`.
    public var path: String
    /// The decoded query parameters; a repeated name keeps its last value.
    public var query: [String: String]
    /// The request header fields.
    public var headers: HTTPHeaders
    /// The request body (empty when there is none).
    public var body: Data
    /// The values of the `{name}` segments of the matched route pattern.
    public var pathParameters: [String: String]
    /// The peer's IP address.
    public var remoteAddress: String

    /// Creates a request; servers build these, tests and handlers may too.
    public init(
        method: String,
        path: String,
        query: [String: String] = [:],
        headers: HTTPHeaders = [],
        body: Data = Data(),
        pathParameters: [String: String] = [:],
        remoteAddress: String = ""
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.pathParameters = pathParameters
        self.remoteAddress = remoteAddress
    }

    /// Decodes the body as JSON into `type`.
    /// - Throws: `DecodingError` when the body is not valid JSON for `type`.
    public func decodeJSON<T: Decodable>(_ type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try decoder.decode(type, from: body)
    }
}
