import Foundation
import ParleyCore
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Client tokens from a Parley server's local endpoint, `POST /v1/local/token`: the
/// single-user setup where the app and the server run on the same machine or network. Apps
/// with their own backend pass a closure that asks that backend instead.
///
/// ```swift
/// let tokens = LocalTokenSource(server: URL(string: "http://127.0.0.1:8080")!)
/// let client = RealtimeClient(configuration: .init(server: tokens.server), token: tokens.fetch)
/// ```
public struct LocalTokenSource: Sendable {
    /// The server's `http://` or `https://` base URL.
    public var server: URL

    /// Creates a token source for the server at `server`.
    public init(server: URL) {
        self.server = server
    }

    /// Asks the server for a token.
    /// - Throws: `ProviderError`: `.authentication` (not retryable) when the server hands out
    ///   no local tokens, `.rateLimited` when asked too often, `.connectivity` or `.server`
    ///   otherwise.
    @Sendable
    public func fetch() async throws -> RealtimeToken {
        var request = URLRequest(url: server.appendingPathComponent("v1/local/token"))
        request.httpMethod = "POST"
        request.timeoutInterval = 10
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await URLSession.shared.data(for: request)
        } catch {
            throw ProviderError(.connectivity, provider: Self.provider, message: "The server could not be reached: \(error.localizedDescription)")
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let body = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        switch status {
        case 200:
            guard let value = body?["value"] as? String, !value.isEmpty else {
                throw ProviderError(.server, provider: Self.provider, message: "The token response has no value.", statusCode: status)
            }
            let expiresAt = (body?["expires_at"] as? NSNumber).map { Date(timeIntervalSince1970: $0.doubleValue) }
            return RealtimeToken(value: value, expiresAt: expiresAt)
        case 401, 403:
            let message = ((body?["error"] as? [String: Any])?["message"] as? String)
                ?? "This server does not hand out local tokens; get one from your app's backend."
            throw ProviderError(.authentication, provider: Self.provider, message: message, statusCode: status)
        case 429:
            throw ProviderError(.rateLimited, provider: Self.provider, message: "The server is limiting token requests; retrying shortly.", statusCode: status)
        default:
            throw ProviderError(.server, provider: Self.provider, message: "The token request failed with HTTP \(status).", statusCode: status)
        }
    }

    private static let provider = "parley-local-token"
}
