import Foundation
import ParleyCore
import ParleyNet
import ParleyTesting
import Testing
@testable import ParleyOpenAI

struct OpenAITestDeadlineExceeded: Error {}

/// Runs `operation`, failing if it takes longer than `seconds`.
func openAITestDeadline<T: Sendable>(_ seconds: Double = 30, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: TestDeadline.seconds(seconds))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw OpenAITestDeadlineExceeded() }
        return value
    }
}

/// Runs `body` with a fresh fake server and shuts it down afterwards.
func withFakeOpenAIServer(_ body: (FakeOpenAIServer) async throws -> Void) async throws {
    let server = try FakeOpenAIServer()
    do {
        try await body(server)
    } catch {
        await server.shutdown()
        throw error
    }
    await server.shutdown()
}

/// A fresh fake server per test, and a model pointed at it.
struct ChatFixture {
    let server: FakeOpenAIServer
    let model: OpenAILanguageModel

    init(
        retry: OpenAIRetryPolicy = OpenAIRetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(5), maxBackoff: .milliseconds(20)),
        timeouts: OpenAITimeouts = OpenAITimeouts(firstOutput: .seconds(10), idle: .seconds(10))
    ) throws {
        server = try FakeOpenAIServer(extraRequestHeaders: ["x-parley-test"])
        model = OpenAILanguageModel(configuration: OpenAIConfiguration(
            baseURL: server.baseURL,
            apiKey: "sk-test-secret-key-123",
            model: "fake-model",
            headers: ["X-Parley-Test": "yes"],
            timeouts: timeouts,
            retry: retry
        ))
    }

    /// Runs `body` with a fresh fixture and shuts its server down afterwards.
    static func with(
        retry: OpenAIRetryPolicy = OpenAIRetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(5), maxBackoff: .milliseconds(20)),
        timeouts: OpenAITimeouts = OpenAITimeouts(firstOutput: .seconds(10), idle: .seconds(10)),
        _ body: (ChatFixture) async throws -> Void
    ) async throws {
        let fixture = try ChatFixture(retry: retry, timeouts: timeouts)
        do {
            try await body(fixture)
        } catch {
            await fixture.server.shutdown()
            throw error
        }
        await fixture.server.shutdown()
    }

    func collect(_ request: ChatRequest = ChatRequest(messages: [.user("hi")])) async throws -> [LanguageModelEvent] {
        let model = model
        return try await openAITestDeadline {
            var events: [LanguageModelEvent] = []
            for try await event in model.stream(request) { events.append(event) }
            return events
        }
    }

    /// The `ProviderError` the stream ends with, and the events before it.
    func failure(_ request: ChatRequest = ChatRequest(messages: [.user("hi")])) async throws -> (ProviderError?, [LanguageModelEvent]) {
        let model = model
        return try await openAITestDeadline {
            var events: [LanguageModelEvent] = []
            do {
                for try await event in model.stream(request) { events.append(event) }
                return (nil, events)
            } catch let error as ProviderError {
                return (error, events)
            }
        }
    }
}

func text(of events: [LanguageModelEvent]) -> String {
    events.compactMap { if case .textDelta(let text) = $0 { text } else { nil } }.joined()
}

@Suite struct OpenAILanguageModelTests {
    @Test func streamedTextIsReassembledExactly() async throws {
        try await ChatFixture.with { fixture in
            let pieces = ["Hel", "lo", ",", " wor", "ld", "! ", "Ça va ", "😀", "\n", "  spaced  ", "\"quoted\"", "\\back"]
            fixture.server.enqueueChat(.text(pieces, usage: TokenUsage(promptTokens: 21, completionTokens: 12)))
            let events = try await fixture.collect()
            #expect(events == pieces.map { .textDelta($0) } + [.finished(.stop, TokenUsage(promptTokens: 21, completionTokens: 12))])
        }
    }

    @Test func sendsTheRequestTheAPIExpects() async throws {
        try await ChatFixture.with { fixture in
            fixture.server.enqueueChat(.text(["ok"]))
            let request = ChatRequest(
                messages: [.system("be brief"), .user("hi")],
                tools: [CalculatorTool().definition],
                toolChoice: .auto,
                temperature: 0.3,
                maxTokens: 64
            )
            _ = try await fixture.collect(request)
            let recorded = try #require(fixture.server.requests.first)
            #expect(recorded.method == "POST")
            #expect(recorded.path == "/v1/chat/completions")
            #expect(recorded.headers["authorization"] == "Bearer sk-test-secret-key-123")
            #expect(recorded.headers["x-parley-test"] == "yes")
            #expect(recorded.headers["content-type"] == "application/json")
            let body = try #require(recorded.json)
            #expect(body["model"] == "fake-model")
            #expect(body["stream"] == true)
            #expect(body["stream_options"] == ["include_usage": true])
            #expect(body["messages"] == [["role": "system", "content": "be brief"], ["role": "user", "content": "hi"]])
            #expect(body["tools"]?.jsonText.contains(#""name":"calculate""#) == true)
            #expect(body["tool_choice"] == "auto")
            #expect(body["temperature"] == 0.3)
            #expect(body["max_tokens"] == 64)
            guard case .object(let fields) = body else { throw OpenAITestDeadlineExceeded() }
            #expect(Set(fields.keys) == ["model", "messages", "stream", "stream_options", "tools", "tool_choice", "temperature", "max_tokens"])
        }
    }

    @Test func extraBodyFieldsAreAddedWithoutReplacingStandardOnes() async throws {
        try await withFakeOpenAIServer { server in
            server.enqueueChat(.text(["ok"]))
            let model = OpenAILanguageModel(
                configuration: OpenAIConfiguration(baseURL: server.baseURL, model: "fake-model"),
                extraBodyFields: ["id_slot": 1, "cache_prompt": true, "model": "other", "stream": false]
            )
            _ = try await openAITestDeadline {
                for try await _ in model.stream(ChatRequest(messages: [.user("hi")])) {}
            }
            let body = try #require(server.requests.first?.json)
            #expect(body["id_slot"] == 1)
            #expect(body["cache_prompt"] == true)
            #expect(body["model"] == "fake-model")
            #expect(body["stream"] == true)
        }
    }

    @Test(arguments: [false, true])
    func toolCallsAreAssembled(repeatIDs: Bool) async throws {
        try await ChatFixture.with { fixture in
            let calls = [
                ToolCall(id: "call_1", name: "calculate", arguments: #"{"expression":"(2+3)*4"}"#),
                ToolCall(id: "call_2", name: "get_current_time", arguments: #"{"timezone":"Europe/Paris"}"#),
            ]
            fixture.server.enqueueChat(.toolCalls(calls, argumentPieceLength: 3, repeatIDs: repeatIDs))
            let events = try await fixture.collect()
            #expect(events == calls.map { .toolCall($0) } + [.finished(.toolCalls, nil)])
        }
    }

    @Test func lenientAboutMalformedChunksCommentsAndUnknownFields() async throws {
        try await ChatFixture.with { fixture in
            fixture.server.enqueueChat(.stream([
                .raw(": keep-alive\n\n"),
                .text("a"),
                .raw("data: {not json\n\n"),
                .raw(#"data: {"choices":[],"usage":null,"novel":{"x":1}}"# + "\n\n"),
                .raw(#"data: {"choices":[{"index":0,"delta":{"content":"b","reasoning":"hm"},"finish_reason":null,"logprobs":null}]}"# + "\r\n\r\n"),
                .raw("event: ping\ndata: {}\n\n"),
                .finish("some_new_reason"),
                .done,
            ]))
            let events = try await fixture.collect()
            #expect(events == [.textDelta("a"), .textDelta("b"), .finished(.other("some_new_reason"), nil)])
        }
    }

    @Test func aStreamWithoutDoneButWithFinishReasonCompletes() async throws {
        try await ChatFixture.with { fixture in
            fixture.server.enqueueChat(.stream([.text("done"), .finish("stop")]))
            let events = try await fixture.collect()
            #expect(events == [.textDelta("done"), .finished(.stop, nil)])
        }
    }

    @Test(arguments: [
        (FakeChatScript.error(status: 401, message: "Incorrect API key provided: sk-test-secret-key-123"), ProviderError.Category.authentication),
        (.error(status: 403, message: "Project does not have access"), .authentication),
        (.error(status: 429, message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded"), .rateLimited),
        (.error(status: 429, message: "You exceeded your current quota", type: "insufficient_quota", code: "insufficient_quota"), .quotaExceeded),
        (.error(status: 400, message: "Invalid value for 'temperature'", type: "invalid_request_error"), .invalidRequest),
        (.error(status: 404, message: "The model does not exist"), .invalidRequest),
        (.error(status: 500, message: "The server had an error"), .server),
        (.error(status: 503, message: "Overloaded"), .server),
    ])
    func errorStatusesAreCategorised(script: FakeChatScript, category: ProviderError.Category) async throws {
        try await ChatFixture.with(retry: .none) { fixture in
            fixture.server.enqueueChat(script)
            let (error, events) = try await fixture.failure()
            let failure = try #require(error)
            #expect(events.isEmpty)
            #expect(failure.category == category)
            #expect(failure.statusCode == script.status)
            #expect(failure.provider == "openai-chat")
            #expect(failure.message.hasPrefix("HTTP \(script.status): "))
            #expect(!failure.message.contains("sk-test-secret-key-123"))
        }
    }

    @Test func theMessageComesFromTheBody() async throws {
        try await ChatFixture.with(retry: .none) { fixture in
            fixture.server.enqueueChat(.error(status: 400, message: "'messages' must contain at least one message"))
            let (error, _) = try await fixture.failure()
            #expect(error?.message == "HTTP 400: 'messages' must contain at least one message")
            fixture.server.enqueueChat(FakeChatScript(status: 502, errorBody: "<html>Bad Gateway</html>"))
            let (plain, _) = try await fixture.failure()
            #expect(plain?.message == "HTTP 502: <html>Bad Gateway</html>")
            #expect(plain?.category == .server)
        }
    }

    @Test func anErrorInsideTheStreamIsTyped() async throws {
        try await ChatFixture.with(retry: .none) { fixture in
            fixture.server.enqueueChat(.stream([.text("partial "), .error(message: "The model crashed", type: "server_error", code: nil)]))
            let (error, events) = try await fixture.failure()
            #expect(events == [.textDelta("partial ")])
            #expect(error?.category == .server)
            #expect(error?.message == "error in stream: The model crashed")

            fixture.server.enqueueChat(.stream([.error(message: "quota", type: "insufficient_quota", code: "insufficient_quota")]))
            let category = try await fixture.failure().0?.category
            #expect(category == .quotaExceeded)
        }
    }

    @Test func aMidStreamDisconnectIsAConnectivityError() async throws {
        try await ChatFixture.with { fixture in
            fixture.server.enqueueChat(.stream([.text("Once upon"), .disconnect]))
            let (error, events) = try await fixture.failure()
            #expect(events == [.textDelta("Once upon")])
            #expect(error?.category == .connectivity)
            #expect(fixture.server.requests.count == 1, "no retry once text was delivered")
        }
    }

    @Test func aRefusedConnectionIsAConnectivityError() async throws {
        let closed = try ClosedPort()
        let port = closed.port
        defer { withExtendedLifetime(closed) {} }
        let model = OpenAILanguageModel(configuration: OpenAIConfiguration(
            baseURL: URL(string: "http://127.0.0.1:\(port)/v1")!, model: "m", retry: .none
        ))
        let error = try await openAITestDeadline { () -> ProviderError? in
            do {
                for try await _ in model.stream(ChatRequest(messages: [.user("hi")])) {}
                return nil
            } catch let error as ProviderError {
                return error
            }
        }
        #expect(error?.category == .connectivity)
    }

    @Test func anUnknownHostIsAConnectivityError() async throws {
        let model = OpenAILanguageModel(configuration: OpenAIConfiguration(
            baseURL: URL(string: "http://no-such-host.invalid/v1")!, model: "m", retry: .none
        ))
        let error = try await openAITestDeadline { () -> ProviderError? in
            do {
                for try await _ in model.stream(ChatRequest(messages: [.user("hi")])) {}
                return nil
            } catch let error as ProviderError {
                return error
            }
        }
        #expect(error?.category == .connectivity)
        #expect(error?.message.hasPrefix("cannot connect to no-such-host.invalid") == true)
    }

    @Test func tlsToAPlainServerIsAConnectivityError() async throws {
        try await ChatFixture.with { fixture in
            let model = OpenAILanguageModel(configuration: OpenAIConfiguration(
                baseURL: URL(string: "https://127.0.0.1:\(fixture.server.port)/v1")!, model: "m", retry: .none
            ))
            let error = try await openAITestDeadline { () -> ProviderError? in
                do {
                    for try await _ in model.stream(ChatRequest(messages: [.user("hi")])) {}
                    return nil
                } catch let error as ProviderError {
                    return error
                }
            }
            #expect(error?.category == .connectivity)
        }
    }

    @Test func aStallBeforeTheFirstTokenTimesOut() async throws {
        try await ChatFixture.with(retry: .none, timeouts: OpenAITimeouts(firstOutput: .milliseconds(200), idle: .seconds(10))) { fixture in
            fixture.server.enqueueChat(FakeChatScript(steps: [.stall]))
            let (error, _) = try await fixture.failure()
            #expect(error?.category == .timeout)
            #expect(error?.message == "no response within 0.2 s")
            try await openAITestDeadline { await fixture.server.waitForDisconnects(1) }
        }
    }

    @Test func aStallBeforeTheHeadTimesOut() async throws {
        try await ChatFixture.with(retry: .none, timeouts: OpenAITimeouts(firstOutput: .milliseconds(200), idle: .seconds(10))) { fixture in
            fixture.server.enqueueChat(FakeChatScript(steps: [.text("late"), .done], delayBeforeHead: .seconds(2)))
            let (error, _) = try await fixture.failure()
            #expect(error?.category == .timeout)
        }
    }

    @Test func aStallMidStreamTimesOut() async throws {
        try await ChatFixture.with(retry: .none, timeouts: OpenAITimeouts(firstOutput: .seconds(10), idle: .milliseconds(200))) { fixture in
            fixture.server.enqueueChat(.stream([.text("Hello"), .stall]))
            let (error, events) = try await fixture.failure()
            #expect(events == [.textDelta("Hello")])
            #expect(error?.category == .timeout)
            #expect(error?.message == "the response stalled for more than 0.2 s")
        }
    }

    @Test func retryableFailuresBeforeTheFirstTokenAreRetried() async throws {
        try await ChatFixture.with { fixture in
            fixture.server.enqueueChat(
                .error(status: 503, message: "busy"),
                FakeChatScript(status: 429, headers: ["Retry-After": "0"], errorBody: #"{"error":{"message":"slow down"}}"#),
                .text(["finally"])
            )
            let events = try await fixture.collect()
            #expect(text(of: events) == "finally")
            #expect(fixture.server.requests.count == 3)
        }
    }

    @Test func anInterruptedStreamBeforeAnyTokenIsRetried() async throws {
        try await ChatFixture.with { fixture in
            fixture.server.enqueueChat(.stream([.raw(": hi\n\n"), .disconnect]), .text(["second try"]))
            let events = try await fixture.collect()
            #expect(text(of: events) == "second try")
            #expect(fixture.server.requests.count == 2)
        }
    }

    @Test func retriesGiveUpAfterTheLastAttempt() async throws {
        try await ChatFixture.with(retry: OpenAIRetryPolicy(maxAttempts: 2, initialBackoff: .milliseconds(1))) { fixture in
            fixture.server.setFallback(chat: .error(status: 500, message: "down"))
            let (error, _) = try await fixture.failure()
            #expect(error?.category == .server)
            #expect(fixture.server.requests.count == 2)
        }
    }

    @Test func nonRetryableErrorsAreNotRetried() async throws {
        try await ChatFixture.with { fixture in
            fixture.server.enqueueChat(.error(status: 401, message: "bad key"), .text(["never"]))
            let category = try await fixture.failure().0?.category
            #expect(category == .authentication)
            #expect(fixture.server.requests.count == 1)
        }
    }

    @Test func cancellingTheConsumerClosesTheConnection() async throws {
        try await ChatFixture.with { fixture in
            fixture.server.enqueueChat(.stream([.text("Once upon a time"), .stall]))
            let model = fixture.model
            let firstToken = AsyncGate()
            let consumer = Task {
                for try await event in model.stream(ChatRequest(messages: [.user("story")])) {
                    if case .textDelta = event { firstToken.open() }
                }
            }
            try await openAITestDeadline { await firstToken.wait() }
            #expect(fixture.server.disconnects == 0)
            consumer.cancel()
            try await openAITestDeadline { await fixture.server.waitForDisconnects(1) }
        }
    }
}
