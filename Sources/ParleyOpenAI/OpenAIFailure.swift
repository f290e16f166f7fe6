import Foundation
import ParleyCore
import ParleyNet

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A failed attempt: the typed error, and how long the server asked us to wait before retrying.
struct OpenAIFailure: Error {
    var error: ProviderError
    var retryAfter: Duration?
}

/// Turns HTTP statuses, error bodies and transport errors into `ProviderError`s.
struct OpenAIErrorMapper: Sendable {
    /// The provider name errors carry, for example `openai-chat`.
    let provider: String
    let configuration: OpenAIConfiguration

    /// The error for a non-2xx response.
    func failure(status: Int, headers: [String: String], body: Data) -> OpenAIFailure {
        let detail = OpenAIErrorDetail(body: body)
        let category: ProviderError.Category
        switch status {
        case 401, 403:
            category = .authentication
        case 429:
            category = detail.isQuotaExhausted ? .quotaExceeded : .rateLimited
        case 408:
            category = .timeout
        case 400..<500:
            category = .invalidRequest
        case 500..<600:
            category = .server
        default:
            category = .unknown
        }
        let explanation = detail.message ?? HTTPURLResponse.localizedString(forStatusCode: status)
        let error = ProviderError(
            category,
            provider: provider,
            message: configuration.redacting("HTTP \(status): \(explanation)"),
            statusCode: status
        )
        return OpenAIFailure(error: error, retryAfter: headers["retry-after"].flatMap(Double.init).map { .milliseconds(Int($0 * 1000)) })
    }

    /// The error for an `error` object inside a stream.
    func failure(inStream detail: OpenAIErrorDetail) -> OpenAIFailure {
        let category: ProviderError.Category
        if detail.isQuotaExhausted {
            category = .quotaExceeded
        } else {
            switch detail.kind {
            case "rate_limit_exceeded", "rate_limit_error", "requests", "tokens": category = .rateLimited
            case "invalid_request_error", "context_length_exceeded", "invalid_value": category = .invalidRequest
            case "authentication_error", "invalid_api_key", "permission_error": category = .authentication
            default: category = .server
            }
        }
        let message = configuration.redacting("error in stream: \(detail.message ?? "no message")")
        return OpenAIFailure(error: ProviderError(category, provider: provider, message: message))
    }

    /// The error for a transport failure, or `nil` for cancellation.
    func failure(transport error: any Error) -> OpenAIFailure? {
        if error is CancellationError { return nil }
        if let failure = error as? OpenAIFailure { return failure }
        if let clientError = error as? HTTPClientError {
            let host = configuration.baseURL.host ?? configuration.baseURL.absoluteString
            let (category, message): (ProviderError.Category, String) = switch clientError.kind {
            case .connectionFailed: (.connectivity, "cannot connect to \(host): \(clientError.message)")
            case .connectionLost: (.connectivity, "the connection to \(host) broke mid-response: \(clientError.message)")
            case .timedOut: (.timeout, "\(host) did not answer in time: \(clientError.message)")
            case .responseTooLarge: (.server, clientError.message)
            case .invalidRequest: (.invalidRequest, "invalid request URL \(configuration.baseURL): \(clientError.message)")
            case .addressRefused, .redirectRefused: (.invalidRequest, "the request to \(host) was refused: \(clientError.message)")
            case .other: (.connectivity, clientError.message)
            }
            return OpenAIFailure(error: ProviderError(category, provider: provider, message: message, underlying: clientError))
        }
        if let parserError = error as? ServerSentEventParser.Failure {
            return OpenAIFailure(error: ProviderError(.server, provider: provider, message: "the server sent a \(parserError)", underlying: parserError))
        }
        return OpenAIFailure(error: ProviderError(.unknown, provider: provider, message: "\(error)", underlying: error))
    }

    /// The error for a stream that ended before the reply did.
    func disconnected() -> OpenAIFailure {
        OpenAIFailure(error: ProviderError(.connectivity, provider: provider, message: "the connection closed before the reply finished"))
    }
}

/// The `error` member of an OpenAI-style error body or chunk: `{"error": {"message", "type", "code"}}`,
/// or `{"error": "text"}` as some servers send.
struct OpenAIErrorDetail: Sendable, Hashable {
    var message: String?
    var type: String?
    var code: String?

    /// The code, or the type when there is no code.
    var kind: String? { code ?? type }

    /// Whether the error says the account is out of credit rather than sending too fast.
    var isQuotaExhausted: Bool { code == "insufficient_quota" || type == "insufficient_quota" }

    init(message: String?, type: String? = nil, code: String? = nil) {
        self.message = message
        self.type = type
        self.code = code
    }

    /// Reads the detail from a response body; for a body that is not an error object, its text
    /// (trimmed, at most 500 characters) is the message.
    init(body: Data) {
        if let value = try? JSONDecoder().decode(JSONValue.self, from: body), let detail = OpenAIErrorDetail(errorMember: value["error"]) {
            self = detail
            return
        }
        let text = String(decoding: body.prefix(2_000), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        self.init(message: text.isEmpty ? nil : String(text.prefix(500)))
    }

    /// Reads the `error` member of a body or chunk; `nil` when there is none.
    init?(errorMember: JSONValue?) {
        switch errorMember {
        case .string(let message):
            self.init(message: message)
        case .object:
            let code: String? = switch errorMember?["code"] {
            case .string(let code): code
            case .number(let number): String(Int(number))
            default: nil
            }
            self.init(message: errorMember?["message"]?.stringValue, type: errorMember?["type"]?.stringValue, code: code)
        default:
            return nil
        }
    }
}
