import Foundation

/// An error from a model provider (speech recognition, language model, speech synthesis),
/// classified so callers can decide what to do: retry, tell the user, or give up.
public struct ProviderError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Category: String, Sendable, Codable, CaseIterable {
        case authentication
        case rateLimited = "rate_limited"
        case quotaExceeded = "quota_exceeded"
        case connectivity
        case timeout
        case server
        case invalidRequest = "invalid_request"
        case cancelled
        case unknown
    }

    /// What kind of failure this is.
    public var category: Category
    /// The provider that failed, for example `openai-chat` or `whisper`.
    public var provider: String
    /// A human-readable explanation, safe to show to a user (never contains secrets).
    public var message: String
    /// The HTTP status, when the failure came from an HTTP response.
    public var statusCode: Int?
    /// The error that caused this one, if any.
    public var underlying: (any Error & Sendable)?

    /// Creates a provider error.
    public init(
        _ category: Category,
        provider: String,
        message: String,
        statusCode: Int? = nil,
        underlying: (any Error & Sendable)? = nil
    ) {
        self.category = category
        self.provider = provider
        self.message = message
        self.statusCode = statusCode
        self.underlying = underlying
    }

    /// Whether trying the same request again may succeed.
    public var isRetryable: Bool {
        switch category {
        case .rateLimited, .connectivity, .timeout, .server: true
        case .authentication, .quotaExceeded, .invalidRequest, .cancelled, .unknown: false
        }
    }

    public var description: String { "\(provider): \(category.rawValue): \(message)" }
}
