import Foundation

/// Where and how to reach an OpenAI-compatible API (OpenAI, Groq, Ollama, vLLM, llama.cpp's
/// server, LocalAI), shared by `OpenAILanguageModel`, `OpenAISpeechRecognizer` and
/// `OpenAISpeechSynthesizer`.
///
/// ```swift
/// let configuration = OpenAIConfiguration(baseURL: URL(string: "http://127.0.0.1:8080/v1")!, model: "smollm2")
/// ```
public struct OpenAIConfiguration: Sendable {
    /// The API root including the version, for example `https://api.openai.com/v1`.
    public var baseURL: URL
    /// The API key sent as `Authorization: Bearer …`; `nil` or empty sends none.
    public var apiKey: String?
    /// The model name, for example `gpt-4o-mini`, `whisper-1` or `tts-1`.
    public var model: String
    /// Extra header fields sent with every request (they override the defaults).
    public var headers: [String: String]
    /// How long to wait for a response to start and to keep flowing.
    public var timeouts: OpenAITimeouts
    /// How failed requests are retried.
    public var retry: OpenAIRetryPolicy

    /// OpenAI's own API root.
    public static let openAIBaseURL = URL(string: "https://api.openai.com/v1")!

    /// Creates a configuration.
    public init(
        baseURL: URL = OpenAIConfiguration.openAIBaseURL,
        apiKey: String? = nil,
        model: String,
        headers: [String: String] = [:],
        timeouts: OpenAITimeouts = OpenAITimeouts(),
        retry: OpenAIRetryPolicy = OpenAIRetryPolicy()
    ) {
        self.baseURL = baseURL
        self.apiKey = apiKey
        self.model = model
        self.headers = headers
        self.timeouts = timeouts
        self.retry = retry
    }

    /// The URL of `path` (like `chat/completions`) under `baseURL`.
    func url(_ path: String) -> URL {
        baseURL.appendingPathComponent(path)
    }

    /// The header fields for a request with the given content type.
    func headerFields(contentType: String, accept: String) -> [String: String] {
        var fields = ["Content-Type": contentType, "Accept": accept]
        if let apiKey, !apiKey.isEmpty { fields["Authorization"] = "Bearer \(apiKey)" }
        fields.merge(headers) { _, custom in custom }
        return fields
    }

    /// `text` with the API key, if it appears, masked.
    func redacting(_ text: String) -> String {
        guard let apiKey, apiKey.count >= 8 else { return text }
        return text.replacingOccurrences(of: apiKey, with: "***")
    }
}

/// How long OpenAI providers wait.
public struct OpenAITimeouts: Sendable, Hashable {
    /// From sending a request to its first delivered output (token, audio, transcript).
    public var firstOutput: Duration
    /// The longest silence between bytes once output has started.
    public var idle: Duration

    /// Creates timeouts.
    public init(firstOutput: Duration = .seconds(30), idle: Duration = .seconds(30)) {
        self.firstOutput = firstOutput
        self.idle = idle
    }
}

/// Exponential backoff with jitter for retryable failures (rate limits, 5xx, connectivity,
/// timeouts). A stream is retried only before it delivered anything.
public struct OpenAIRetryPolicy: Sendable, Hashable {
    /// The most attempts in total, the first included; 1 disables retries.
    public var maxAttempts: Int
    /// The wait before the second attempt; it doubles for each further attempt.
    public var initialBackoff: Duration
    /// The longest wait between attempts, also for a server's `Retry-After`.
    public var maxBackoff: Duration
    /// The share of each wait that is randomised (0 = none, 1 = anywhere from zero to the full wait).
    public var jitter: Double

    /// Creates a policy.
    public init(maxAttempts: Int = 3, initialBackoff: Duration = .milliseconds(500), maxBackoff: Duration = .seconds(8), jitter: Double = 0.5) {
        self.maxAttempts = max(1, maxAttempts)
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
        self.jitter = min(max(jitter, 0), 1)
    }

    /// No retries.
    public static let none = OpenAIRetryPolicy(maxAttempts: 1)

    /// The wait after failed attempt number `attempt` (1-based); a server's `retryAfter` wins when given.
    func delay(after attempt: Int, retryAfter: Duration?) -> Duration {
        if let retryAfter { return min(retryAfter, maxBackoff) }
        let exponential = initialBackoff * (1 << min(max(attempt - 1, 0), 20))
        let capped = min(exponential, maxBackoff)
        return capped * (1 - jitter * Double.random(in: 0..<1))
    }
}
