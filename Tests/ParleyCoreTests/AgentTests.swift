import Foundation
import ParleyTesting
import Testing
@testable import ParleyCore

/// A one-shot event tests can fire and await.
final class AgentTestSignal: @unchecked Sendable {  // `lock` guards `fired` and `waiters`.
    private let lock = NSLock()
    private var fired = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func fire() {
        lock.lock()
        fired = true
        let waiting = waiters
        waiters = []
        lock.unlock()
        for waiter in waiting { waiter.resume() }
    }

    var hasFired: Bool {
        lock.lock()
        defer { lock.unlock() }
        return fired
    }

    /// Waits until fired; ignores cancellation on purpose (tools use it to misbehave).
    func wait() async {
        await withCheckedContinuation { continuation in
            lock.lock()
            if fired {
                lock.unlock()
                continuation.resume()
            } else {
                waiters.append(continuation)
                lock.unlock()
            }
        }
    }
}

struct AgentTestDeadlineExceeded: Error {}

/// Runs `operation`, failing with `AgentTestDeadlineExceeded` if it takes longer than `seconds`.
func agentTestDeadline<T: Sendable>(_ seconds: Double = 30, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: TestDeadline.seconds(seconds))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw AgentTestDeadlineExceeded() }
        return value
    }
}

/// Awaits `condition` becoming true, checking between short suspensions, up to `seconds`.
func agentTestEventually(_ seconds: Double = 30, _ condition: @escaping @Sendable () -> Bool) async throws {
    try await agentTestDeadline(seconds) {
        while !condition() { try await Task.sleep(for: .milliseconds(1)) }
    }
}

/// A tool defined by a closure.
struct ClosureTool: Tool {
    let name: String
    let description = "A test tool."
    let parameters: JSONValue
    let body: @Sendable (JSONValue) async throws -> String
    let isCancellable: Bool

    init(
        _ name: String, parameters: JSONValue = ["type": "object"], cancellable: Bool = false,
        body: @escaping @Sendable (JSONValue) async throws -> String
    ) {
        self.name = name
        self.parameters = parameters
        self.isCancellable = cancellable
        self.body = body
    }

    func call(arguments: JSONValue) async throws -> String { try await body(arguments) }
}

@Suite struct AgentTests {
    static func collect(_ agent: Agent, history: [ChatMessage] = [.user("hi")]) async throws -> [AgentEvent] {
        try await agentTestDeadline {
            var events: [AgentEvent] = []
            for try await event in agent.run(history: history) { events.append(event) }
            return events
        }
    }

    static func text(of events: [AgentEvent]) -> String {
        events.compactMap { if case .textDelta(let text) = $0 { text } else { nil } }.joined()
    }

    static func messages(of events: [AgentEvent]) -> [ChatMessage] {
        events.compactMap { if case .message(let message) = $0 { message } else { nil } }
    }

    static func call(_ id: String, _ name: String, _ arguments: String = "{}") -> ToolCall {
        ToolCall(id: id, name: name, arguments: arguments)
    }

    @Test func streamsTextAndRecordsTheReply() async throws {
        let reply = "Hello there, friend. How can I help?"
        let model = ScriptedLanguageModel(replies: [.text(reply, pieceLength: 3, usage: TokenUsage(promptTokens: 10, completionTokens: 9))])
        let agent = Agent(model: model, instructions: "Be brief.")
        let events = try await Self.collect(agent, history: [.user("Hello")])

        #expect(Self.text(of: events) == reply)
        #expect(Self.messages(of: events) == [.assistant(text: reply)])
        #expect(events.last == .finished(.stop, TokenUsage(promptTokens: 10, completionTokens: 9)))
        #expect(model.requests.first?.messages == [.system("Be brief."), .user("Hello")])
        #expect(model.requests.first?.tools == [])
        #expect(model.requests.first?.toolChoice == nil)
    }

    @Test func runsASingleToolCallAndFeedsTheResultBack() async throws {
        let call = Self.call("c1", "calculate", #"{"expression":"6*7"}"#)
        let model = ScriptedLanguageModel(replies: [.toolCalls([call]), .text("It is 42.")])
        let agent = Agent(model: model, instructions: "", tools: ToolRegistry([CalculatorTool()]))
        let events = try await Self.collect(agent)

        #expect(events.contains(.toolCallStarted(call)))
        #expect(events.contains(.toolCallFinished(call, output: "42", isError: false)))
        #expect(Self.messages(of: events) == [
            .assistant(text: "", toolCalls: [call]),
            .tool(callID: "c1", content: "42"),
            .assistant(text: "It is 42."),
        ])
        #expect(model.requests.count == 2)
        #expect(model.requests[1].messages == [.user("hi"), .assistant(text: "", toolCalls: [call]), .tool(callID: "c1", content: "42")])
        #expect(model.requests[0].tools.map(\.name) == ["calculate"])
        #expect(model.requests[0].toolChoice == .auto)
    }

    @Test func runsTheToolCallsOfAStepConcurrently() async throws {
        // Each call waits for the other to start: run one after the other, both would time out.
        let first = AgentTestSignal()
        let second = AgentTestSignal()
        let rendezvous = ClosureTool("rendezvous") { arguments in
            let mine = arguments["side"] == "a" ? first : second
            let other = arguments["side"] == "a" ? second : first
            mine.fire()
            await other.wait()
            return "met"
        }
        let calls = [Self.call("a", "rendezvous", #"{"side":"a"}"#), Self.call("b", "rendezvous", #"{"side":"b"}"#)]
        let model = ScriptedLanguageModel(replies: [.toolCalls(calls), .text("done")])
        let agent = Agent(model: model, instructions: "", tools: ToolRegistry([rendezvous]), options: AgentOptions(toolTimeout: .seconds(5)))
        let events = try await Self.collect(agent)

        #expect(Self.messages(of: events) == [
            .assistant(text: "", toolCalls: calls),
            .tool(callID: "a", content: "met"),
            .tool(callID: "b", content: "met"),
            .assistant(text: "done"),
        ])
    }

    @Test func runsSeveralStepsAndSumsUsage() async throws {
        let time = Self.call("t", "get_current_time", #"{"timezone":"Europe/Paris"}"#)
        let math = Self.call("m", "calculate", #"{"expression":"2^10"}"#)
        let model = ScriptedLanguageModel(replies: [
            .toolCalls([time], text: "Let me check. ", usage: TokenUsage(promptTokens: 5, completionTokens: 1)),
            .toolCalls([math], usage: TokenUsage(promptTokens: 7, completionTokens: 2)),
            .text("Done.", usage: TokenUsage(promptTokens: 9, completionTokens: 3)),
        ])
        let clock = CurrentTimeTool(now: { Date(timeIntervalSince1970: 1_700_000_000) })
        let agent = Agent(model: model, instructions: "x", tools: ToolRegistry([clock, CalculatorTool()]))
        let events = try await Self.collect(agent)

        #expect(model.requests.count == 3)
        #expect(Self.text(of: events) == "Let me check. Done.")
        #expect(Self.messages(of: events).count == 5)
        #expect(events.contains(.toolCallFinished(math, output: "1024", isError: false)))
        #expect(events.filter { if case .stepFinished = $0 { true } else { false } }.count == 3)
        #expect(events.last == .finished(.stop, TokenUsage(promptTokens: 21, completionTokens: 6)))
        #expect(model.requests[2].messages.last == .tool(callID: "m", content: "1024"))
    }

    @Test func aFailingToolReturnsItsErrorToTheModel() async throws {
        let failing = ClosureTool("weather") { _ in throw ToolError("no such city") }
        let call = Self.call("w", "weather")
        let model = ScriptedLanguageModel(replies: [.toolCalls([call]), .text("Sorry.")])
        let agent = Agent(model: model, instructions: "", tools: ToolRegistry([failing]))
        let events = try await Self.collect(agent)

        #expect(events.contains(.toolCallFinished(call, output: "Error: no such city", isError: true)))
        #expect(model.requests[1].messages.last == .tool(callID: "w", content: "Error: no such city"))
        #expect(events.last == .finished(.stop, nil))
    }

    @Test func schemaViolationsAndUnknownToolsAreReportedToTheModel() async throws {
        let badArguments = Self.call("1", "calculate", #"{"expr":"1+1"}"#)
        let unknown = Self.call("2", "launch_rocket")
        let notJSON = Self.call("3", "calculate", "{expression: 1")
        let model = ScriptedLanguageModel(replies: [.toolCalls([badArguments, unknown, notJSON]), .text("ok")])
        let agent = Agent(model: model, instructions: "", tools: ToolRegistry([CalculatorTool()]))
        let events = try await Self.collect(agent)
        let results = Dictionary(uniqueKeysWithValues: events.compactMap { event -> (String, String)? in
            if case .toolCallFinished(let call, let output, true) = event { (call.id, output) } else { nil }
        })

        #expect(results["1"] == #"Error: invalid arguments for calculate: $: missing required property "expression"; $: unexpected property "expr"."#)
        #expect(results["2"] == #"Error: there is no tool named "launch_rocket". Available tools: calculate."#)
        #expect(results["3"] == "Error: the arguments for calculate are not valid JSON: {expression: 1")
    }

    @Test func aToolThatOverrunsItsTimeoutBecomesAnError() async throws {
        let release = AgentTestSignal()
        defer { release.fire() }
        let stuck = ClosureTool("stuck") { _ in
            await release.wait()  // ignores cancellation, like a blocking call would
            return "too late"
        }
        let call = Self.call("s", "stuck")
        let model = ScriptedLanguageModel(replies: [.toolCalls([call]), .text("It timed out.")])
        let options = AgentOptions(toolTimeout: .milliseconds(50), fillerDelay: nil)
        let agent = Agent(model: model, instructions: "", tools: ToolRegistry([stuck]), options: options)
        let events = try await Self.collect(agent)

        #expect(events.contains(.toolCallFinished(call, output: "Error: stuck did not finish within 0.05 s.", isError: true)))
        #expect(Self.text(of: events) == "It timed out.")
    }

    @Test func stopsAfterTheMaximumNumberOfSteps() async throws {
        let call = Self.call("loop", "calculate", #"{"expression":"1"}"#)
        let model = ScriptedLanguageModel(replies: [], fallback: .toolCalls([call]))
        let options = AgentOptions(maxSteps: 3, maxStepsMessage: "I give up.")
        let agent = Agent(model: model, instructions: "", tools: ToolRegistry([CalculatorTool()]), options: options)
        let events = try await Self.collect(agent)

        #expect(model.requests.count == 3)
        #expect(model.requests.map(\.toolChoice) == [.auto, .auto, ToolChoice.none])
        #expect(Self.text(of: events) == "I give up.")
        #expect(events.last == .finished(.maxStepsReached, nil))
        let messages = Self.messages(of: events)
        #expect(messages.last == .assistant(text: "I give up."))
        // Every call in memory has its result, also the one that was not run.
        let calls = messages.flatMap { if case .assistant(_, let calls, _) = $0 { calls } else { [] } }
        let results = messages.compactMap { if case .tool(let id, _) = $0 { id } else { nil } }
        #expect(calls.count == 3 && results.count == 3)
        #expect(messages.contains(.tool(callID: "loop", content: "Not run: the step limit was reached.")))
    }

    @Test func saysTheFillerLineWhileASlowToolRuns() async throws {
        let release = AgentTestSignal()
        let slow = ClosureTool("slow") { _ in
            await release.wait()
            return "done"
        }
        let call = Self.call("s", "slow")
        let model = ScriptedLanguageModel(replies: [.toolCalls([call]), .text("Here it is.")])
        let options = AgentOptions(fillerDelay: .milliseconds(10), fillerLine: "Hang on.")
        let agent = Agent(model: model, instructions: "", tools: ToolRegistry([slow]), options: options)
        let events = try await agentTestDeadline {
            var events: [AgentEvent] = []
            for try await event in agent.run(history: [.user("go")]) {
                events.append(event)
                if case .filler = event { release.fire() }
            }
            return events
        }
        let started = try #require(events.firstIndex(of: .toolCallStarted(call)))
        let filler = try #require(events.firstIndex(of: .filler("Hang on.")))
        let finished = try #require(events.firstIndex(of: .toolCallFinished(call, output: "done", isError: false)))
        #expect(started < filler && filler < finished)
        #expect(!Self.messages(of: events).contains(.assistant(text: "Hang on.")))
    }

    @Test func saysAToolsProgressOnlyAfterTheFillerAndNotTwiceInARow() async throws {
        let progressSaid = AgentTestSignal()
        let reporter = ClosureTool("report") { _ in
            ToolProgress.report("Too early to say.")  // Before the filler delay: not said.
            // A long job reporting as it goes, until its progress was said (or the test's deadline).
            while !progressSaid.hasFired {
                ToolProgress.report("Still searching.")
                try await Task.sleep(for: .milliseconds(2))
            }
            return "found"
        }
        let call = Self.call("r", "report")
        let model = ScriptedLanguageModel(replies: [.toolCalls([call]), .text("Found it.")])
        let options = AgentOptions(fillerDelay: .milliseconds(20), fillerLine: "Hang on.")
        let agent = Agent(model: model, instructions: "", tools: ToolRegistry([reporter]), options: options)
        let events = try await agentTestDeadline {
            var events: [AgentEvent] = []
            for try await event in agent.run(history: [.user("go")]) {
                events.append(event)
                if event == .filler("Still searching.") { progressSaid.fire() }
            }
            return events
        }
        let spoken = events.compactMap { if case .filler(let words) = $0 { words } else { nil } }
        #expect(spoken == ["Hang on.", "Still searching."])
        #expect(!Self.messages(of: events).contains(.assistant(text: "Still searching.")))
    }

    @Test func noFillerWhenToolsAreFast() async throws {
        let call = Self.call("c", "calculate", #"{"expression":"1+1"}"#)
        let model = ScriptedLanguageModel(replies: [.toolCalls([call]), .text("2")])
        let agent = Agent(model: model, instructions: "", tools: ToolRegistry([CalculatorTool()]), options: AgentOptions(fillerDelay: .seconds(30)))
        let events = try await Self.collect(agent)
        #expect(!events.contains { if case .filler = $0 { true } else { false } })
    }

    @Test func cancellingTheConsumerCancelsTheModelStream() async throws {
        let model = ScriptedLanguageModel(replies: [.init([.text("Once upon"), .hang])])
        let agent = Agent(model: model, instructions: "")
        let firstDelta = AgentTestSignal()
        let consumer = Task {
            for try await event in agent.run(history: [.user("story")]) {
                if case .textDelta = event { firstDelta.fire() }
            }
        }
        try await agentTestDeadline { await firstDelta.wait() }
        consumer.cancel()
        try await agentTestEventually { model.cancelledStreams == 1 }
    }

    @Test func cancellingTheConsumerCancelsRunningCancellableTools() async throws {
        let started = AgentTestSignal()
        let cancelled = AgentTestSignal()
        let patient = ClosureTool("patient", cancellable: true) { _ in
            try await withTaskCancellationHandler {
                started.fire()
                try await Task.sleep(for: .seconds(3_600))
                return "never"
            } onCancel: {
                cancelled.fire()
            }
        }
        let model = ScriptedLanguageModel(replies: [.toolCalls([Self.call("p", "patient")]), .text("x")])
        let agent = Agent(model: model, instructions: "", tools: ToolRegistry([patient]), options: AgentOptions(toolTimeout: .seconds(3_600)))
        let consumer = Task {
            for try await _ in agent.run(history: [.user("wait")]) {}
        }
        try await agentTestDeadline { await started.wait() }
        consumer.cancel()
        try await agentTestDeadline { await cancelled.wait() }
        #expect(model.requests.count == 1)
    }

    @Test func aModelErrorEndsTheTurn() async throws {
        let model = ScriptedLanguageModel(replies: [.failure(ProviderError(.server, provider: "scripted", message: "boom"))])
        let agent = Agent(model: model, instructions: "")
        await #expect(throws: ProviderError.self) {
            _ = try await Self.collect(agent)
        }
    }

    @Test func theRequestUsesTheWindowAndOptions() async throws {
        let model = ScriptedLanguageModel(replies: [.text("ok")])
        let history: [ChatMessage] = (1...10).flatMap { [ChatMessage.user("q\($0)"), .assistant(text: "a\($0)")] } + [.user("last")]
        let options = AgentOptions(temperature: 0.2, maxTokens: 50, window: ConversationWindow(maxMessages: 3))
        _ = try await Self.collect(Agent(model: model, instructions: "sys", options: options), history: history)
        let request = try #require(model.requests.first)
        #expect(request.messages == [.system("sys"), .user("q10"), .assistant(text: "a10"), .user("last")])
        #expect(request.temperature == 0.2 && request.maxTokens == 50)
    }
}
