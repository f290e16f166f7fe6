import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyOpenAI

/// The agent loop driving `OpenAILanguageModel` against the fake server over real HTTP.
@Suite struct AgentOverHTTPTests {
    static func run(_ agent: Agent, history: [ChatMessage] = [.user("hi")]) async throws -> [AgentEvent] {
        try await openAITestDeadline {
            var events: [AgentEvent] = []
            for try await event in agent.run(history: history) { events.append(event) }
            return events
        }
    }

    @Test func parallelAndMultiStepToolCallsWithASchemaViolation() async throws {
        try await ChatFixture.with { fixture in
            let math = ToolCall(id: "call_m", name: "calculate", arguments: #"{"expression":"12*12"}"#)
            let time = ToolCall(id: "call_t", name: "get_current_time", arguments: #"{"timezone":"Asia/Tokyo"}"#)
            let invalid = ToolCall(id: "call_x", name: "calculate", arguments: #"{"expression":12}"#)
            fixture.server.enqueueChat(
                .toolCalls([math, time], repeatIDs: true),
                .toolCalls([invalid]),
                .text(["144, ", "and it is late in Tokyo."])
            )
            let clock = CurrentTimeTool(now: { Date(timeIntervalSince1970: 1_700_000_000) })
            let agent = Agent(model: fixture.model, instructions: "You help.", tools: ToolRegistry([CalculatorTool(), clock]))
            let events = try await Self.run(agent)

            #expect(events.contains(.toolCallFinished(math, output: "144", isError: false)))
            #expect(events.contains(.toolCallFinished(time, output: "2023-11-15T07:13:20+09:00 (Wednesday, 15 November 2023, 07:13, Asia/Tokyo)", isError: false)))
            #expect(events.contains(.toolCallFinished(invalid, output: "Error: invalid arguments for calculate: $.expression: expected string, got integer.", isError: true)))
            #expect(events.last == .finished(.stop, TokenUsage(promptTokens: 10, completionTokens: 5)))

            let requests = fixture.server.requests.compactMap(\.json)
            #expect(requests.count == 3)
            guard case .array(let second) = requests[1]["messages"] else {
                Issue.record("no messages")
                return
            }
            #expect(second.count == 5)  // system, user, assistant with two calls, two results
            #expect(second[2]["tool_calls"]?.jsonText.contains("call_m") == true)
            #expect(second[3] == ["role": "tool", "tool_call_id": "call_m", "content": "144"])
            guard case .array(let third) = requests[2]["messages"] else {
                Issue.record("no messages")
                return
            }
            #expect(third.last?["content"]?.stringValue?.hasPrefix("Error: invalid arguments") == true)
        }
    }

    @Test func maxStepsOverHTTP() async throws {
        try await ChatFixture.with { fixture in
            fixture.server.setFallback(chat: .toolCalls([ToolCall(id: "again", name: "calculate", arguments: #"{"expression":"1"}"#)]))
            let agent = Agent(
                model: fixture.model,
                instructions: "",
                tools: ToolRegistry([CalculatorTool()]),
                options: AgentOptions(maxSteps: 2, maxStepsMessage: "Let's stop here.")
            )
            let events = try await Self.run(agent)
            #expect(fixture.server.requests.count == 2)
            #expect(fixture.server.requests.last?.json?["tool_choice"] == "none")
            #expect(events.last == .finished(.maxStepsReached, nil))
        }
    }
}
