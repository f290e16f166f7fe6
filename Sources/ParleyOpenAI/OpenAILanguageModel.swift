import Foundation
import ParleyCore
import ParleyNet

/// A `LanguageModel` speaking OpenAI's streaming `/chat/completions` API, for OpenAI and every
/// compatible server (Groq, Ollama, vLLM, llama.cpp's server, LocalAI).
///
/// Streams text as it arrives and tool calls once assembled; turns HTTP statuses, in-stream
/// errors, connection failures and stalls into `ProviderError`s; retries retryable failures
/// with backoff only while nothing has been delivered; cancelling the consumer closes the connection.
///
/// ```swift
/// let model = OpenAILanguageModel(configuration: .init(apiKey: key, model: "gpt-4o-mini"))
/// for try await event in model.stream(ChatRequest(messages: [.user("Hi")])) { … }
/// ```
public struct OpenAILanguageModel: LanguageModel {
    /// The provider name in errors.
    public static let providerName = "openai-chat"

    /// Where and how requests go.
    public let configuration: OpenAIConfiguration
    /// Fields added to every request body: one server's extensions of the API, such as
    /// llama.cpp's `id_slot` and `cache_prompt`. Empty by default, so other servers get
    /// exactly the OpenAI request.
    public let extraBodyFields: [String: JSONValue]
    private let client: HTTPClient

    /// Creates a model.
    /// - Parameters:
    ///   - configuration: base URL, key, model, headers, timeouts and retries.
    ///   - extraBodyFields: fields added to every request body (they never replace a standard field).
    ///   - client: the HTTP client to use.
    public init(configuration: OpenAIConfiguration, extraBodyFields: [String: JSONValue] = [:], client: HTTPClient = .shared) {
        self.configuration = configuration
        self.extraBodyFields = extraBodyFields
        self.client = client
    }

    public func stream(_ request: ChatRequest) -> AsyncThrowingStream<LanguageModelEvent, any Error> {
        // Events are small; the consumer (the agent loop) drains them as they come.
        let (events, continuation) = AsyncThrowingStream.makeStream(of: LanguageModelEvent.self, bufferingPolicy: .unbounded)
        let errors = OpenAIErrorMapper(provider: Self.providerName, configuration: configuration)
        let body: Data
        do {
            body = try OpenAIChatRequestBody.encode(request, model: configuration.model, extraFields: extraBodyFields)
        } catch {
            continuation.finish(throwing: ProviderError(.invalidRequest, provider: Self.providerName, message: "the request cannot be encoded: \(error)"))
            return events
        }
        let runner = OpenAIRequestRunner(configuration: configuration, errors: errors)
        let httpRequest = HTTPClient.Request(
            url: configuration.url("chat/completions"),
            method: "POST",
            headers: configuration.headerFields(contentType: "application/json", accept: "text/event-stream"),
            body: body,
            idleTimeout: runner.transportTimeout
        )
        let client = client
        let task = Task {
            do {
                try await runner.run { deadline in
                    try await Self.attempt(httpRequest, client: client, errors: errors, deadline: deadline, events: continuation)
                }
                continuation.finish()
            } catch let error as ProviderError {
                continuation.finish(throwing: error)
            } catch {
                continuation.finish(throwing: ProviderError(.cancelled, provider: Self.providerName, message: "the request was cancelled"))
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return events
    }

    private static func attempt(
        _ request: HTTPClient.Request,
        client: HTTPClient,
        errors: OpenAIErrorMapper,
        deadline: OutputDeadline,
        events: AsyncThrowingStream<LanguageModelEvent, any Error>.Continuation
    ) async throws {
        let response = try await client.stream(request)
        guard (200..<300).contains(response.status) else {
            throw errors.failure(status: response.status, headers: response.headers, body: try await response.bodyPrefix(64 << 10))
        }
        var reader = ChatStreamReader(errors: errors, deadline: deadline, events: events)
        for try await piece in response.body {
            if try reader.push(piece) { break }
        }
        try reader.finish()
    }
}

/// Reads one streamed reply: SSE framing, chunk decoding, assembly, delivery.
private struct ChatStreamReader {
    let errors: OpenAIErrorMapper
    let deadline: OutputDeadline
    let events: AsyncThrowingStream<LanguageModelEvent, any Error>.Continuation
    private var parser = ServerSentEventParser()
    private var assembler = OpenAIChatStreamAssembler()
    private var sawDone = false

    init(errors: OpenAIErrorMapper, deadline: OutputDeadline, events: AsyncThrowingStream<LanguageModelEvent, any Error>.Continuation) {
        self.errors = errors
        self.deadline = deadline
        self.events = events
    }

    /// Handles the next bytes; returns `true` once the stream said `[DONE]`.
    mutating func push(_ bytes: Data) throws -> Bool {
        for event in try parser.push(bytes) {
            try handle(event)
            if sawDone { return true }
        }
        return false
    }

    /// Ends the reply: delivers the finish, or throws when the stream broke off before it.
    mutating func finish() throws {
        if !sawDone {
            for event in parser.finish() where !sawDone { try handle(event) }
        }
        guard sawDone || assembler.finishReason != nil else { throw errors.disconnected() }
        for event in assembler.finish() { events.yield(event) }
    }

    private mutating func handle(_ event: ServerSentEvent) throws {
        deadline.progressed()
        // Only a short event can be the end marker: chunks are not trimmed (JSON allows the spaces).
        if event.data.utf8.count <= 32, event.data.trimmingCharacters(in: .whitespaces) == "[DONE]" {
            sawDone = true
            return
        }
        guard let chunk = OpenAIChatChunk(json: Data(event.data.utf8)) else {
            if event.type == "error" { throw errors.failure(inStream: OpenAIErrorDetail(message: event.data.trimmingCharacters(in: .whitespaces))) }
            return  // not a chunk (a keep-alive, a proxy's note): skipped
        }
        if let error = chunk.error { throw errors.failure(inStream: error) }
        if event.type == "error" { throw errors.failure(inStream: OpenAIErrorDetail(message: event.data.trimmingCharacters(in: .whitespaces))) }
        if chunk.choices.contains(where: { $0.delta?.content?.isEmpty == false || $0.delta?.toolCalls.isEmpty == false }) {
            deadline.outputArrived()
        }
        for output in assembler.consume(chunk) {
            events.yield(output)
            deadline.markDelivered()
        }
    }
}
