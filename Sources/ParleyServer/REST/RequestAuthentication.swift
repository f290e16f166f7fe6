import Foundation
import ParleyNet

/// Who a request is from: the backend holding the server secret, or a client with a token.
public enum Caller: Sendable, Hashable {
    case backend
    case client(ClientTokenClaims)
}

/// Checks credentials on REST and WebSocket requests.
public struct RequestAuthentication: Sendable {
    let secret: Data
    let authority: ClientTokenAuthority

    /// Creates an authenticator for `secret`.
    public init(secret: String) {
        self.secret = Data(secret.utf8)
        authority = ClientTokenAuthority(secret: secret)
    }

    /// The credential a request carries: `Authorization: Bearer …` or, for browsers, the
    /// WebSocket subprotocol `openai-insecure-api-key.…`.
    public static func credential(of request: HTTPRequest) -> String? {
        if let header = request.headers["Authorization"], header.lowercased().hasPrefix("bearer ") {
            return String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        }
        let prefix = "openai-insecure-api-key."
        for field in request.headers.values(for: "Sec-WebSocket-Protocol") {
            for proposal in field.split(separator: ",") {
                let name = proposal.trimmingCharacters(in: .whitespaces)
                if name.hasPrefix(prefix) { return String(name.dropFirst(prefix.count)) }
            }
        }
        return nil
    }

    /// Identifies the caller of `request`.
    /// - Throws: `ClientTokenError` (or `.malformed` when there is no credential at all).
    public func caller(of request: HTTPRequest, now: Date = Date()) throws(ClientTokenError) -> Caller {
        guard let credential = Self.credential(of: request) else { throw .malformed }
        if isServerSecret(credential) { return .backend }
        return .client(try authority.verify(credential, now: now))
    }

    /// Whether `credential` is the server secret, compared in constant time.
    func isServerSecret(_ credential: String) -> Bool {
        HMACSHA256.constantTimeEquals(Data(credential.utf8), secret)
    }

    /// Returns `nil` when `request` carries the server secret or a console token (`ConsoleToken`),
    /// or the response to send: 403 for a client token, 401 for anything else.
    public func requireOperator(_ request: HTTPRequest) -> HTTPResponse? {
        if let credential = Self.credential(of: request),
           isServerSecret(credential) || ConsoleToken.isValid(credential, secret: String(decoding: secret, as: UTF8.self)) {
            return nil
        }
        if case .client? = try? caller(of: request) {
            return .error(status: 403, code: "forbidden", message: "The console needs the server secret or a console token ('parley console-token'); client tokens cannot open it.")
        }
        return .error(status: 401, code: "unauthorized", message: "Send the server secret or a console token as 'Authorization: Bearer <token>'.")
    }

    /// Returns `nil` when `request` carries the server secret, or the 401 response to send.
    public func requireBackend(_ request: HTTPRequest) -> HTTPResponse? {
        switch try? caller(of: request) {
        case .backend?: nil
        case .client?: .error(status: 403, code: "forbidden", message: "This route needs the server secret; client tokens cannot use it.")
        case nil: .error(status: 401, code: "unauthorized", message: "Send the server secret as 'Authorization: Bearer <secret>'.")
        }
    }
}
