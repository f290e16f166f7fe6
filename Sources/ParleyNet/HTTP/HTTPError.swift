/// An error a handler throws to answer with a specific status and JSON error body.
///
/// ```swift
/// guard let agent = store.agent(id) else { throw HTTPError(status: 404, code: "not_found", message: "No agent \(id)") }
/// ```
/// Any other error thrown by a handler becomes a 500 `internal_error`.
public struct HTTPError: Error, Sendable, Equatable {
    /// The HTTP status code.
    public var status: Int
    /// A short machine-readable code, for example `not_found`.
    public var code: String
    /// A sentence for people.
    public var message: String

    /// Creates an error response description.
    public init(status: Int, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// The response this error becomes.
    public var response: HTTPResponse {
        .error(status: status, code: code, message: message)
    }
}
