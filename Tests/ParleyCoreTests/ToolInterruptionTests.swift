import Foundation
import ParleyCore
import ParleyTesting
import Testing

/// Tool calls and the user's interruptions, and the filler said while tools run.
@Suite struct ToolInterruptionTests {
    private static func session(
        model: ScriptedLanguageModel, tools: [any Tool], fillerDelay: Duration? = nil
    ) -> (VoiceSession, SessionRecorder) {
        let providers = VoiceSessionProviders(
            recognizer: ScriptedSpeechRecognizer(texts: ["Book a table", "Did it work?", "Did it work?"]), model: model,
            synthesizer: ScriptedSpeechSynthesizer(), tools: ToolRegistry(tools),
            agentOptions: AgentOptions(fillerDelay: fillerDelay),
            makeVoiceActivityDetector: { LoudnessVAD() }, makeResampler: { _, _ in PassThroughResampler() }
        )
        let session = VoiceSession(providers: providers, configuration: VoiceSessionConfiguration())
        let recorder = SessionRecorder()
        recorder.record(session)
        return (session, recorder)
    }

    private static func speakOneTurn(into session: VoiceSession) async throws {
        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 300), sampleRate: 16_000)
        try await session.appendAudio(ScenarioAudio.speech(milliseconds: 800), sampleRate: 16_000)
        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 700), sampleRate: 16_000)
    }

    private static func isToolResult(_ callID: String) -> @Sendable (VoiceSessionEvent) -> Bool {
        { if case .itemCompleted(_, .tool(callID, _)) = $0 { true } else { false } }
    }

    @Test func aStartedCallSurvivesAnInterruptionAndItsResultIsKeptForTheNextTurn() async throws {
        let gate = AsyncGate()
        let tool = GatedTool(gate: gate)
        let model = ScriptedLanguageModel(replies: [
            .toolCalls([ToolCall(id: "call_1", name: "slow_lookup", arguments: "{}")]), .text("Yes, it is booked."),
        ])
        let (session, recorder) = Self.session(model: model, tools: [tool])
        try await Self.speakOneTurn(into: session)
        await gate.waitForArrivals(1)
        // Over 900 ms of speech interrupts once its words so far are known (InterruptionPolicy):
        // "Did it work?" is transcribed then, and again as the turn.
        try await session.appendAudio(ScenarioAudio.speech(milliseconds: 1_000), sampleRate: 16_000)
        #expect(await recorder.waitFor(Match.responseDone(.cancelled)))
        gate.open()
        #expect(await recorder.waitFor(Self.isToolResult("call_1")))
        #expect(tool.cancellations == 0 && tool.calls == 1)

        let messages = await session.ledger.messages
        let callIndex = try #require(messages.firstIndex { if case .assistant(_, let calls, _) = $0 { calls.first?.id == "call_1" } else { false } })
        #expect(messages[callIndex + 1] == .tool(callID: "call_1", content: "found"))

        // The interrupting turn is answered with the result in view; the call is not run again.
        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 700), sampleRate: 16_000)
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        #expect(model.requests.last?.messages.contains(.tool(callID: "call_1", content: "found")) == true)
        #expect(tool.calls == 1)
    }

    @Test func parallelCallsRunTogetherEachWithItsOwnTimeout() async throws {
        let bothStarted = AsyncGate()
        let first = ClosureTool("first") { _ in
            await bothStarted.wait()
            return "one"
        }
        let stuck = TimedTool(name: "stuck", timeout: .milliseconds(50)) {
            await bothStarted.wait()
            try await Task.sleep(for: .seconds(600))
            return "never"
        }
        let model = ScriptedLanguageModel(replies: [
            .toolCalls([ToolCall(id: "a", name: "first", arguments: "{}"), ToolCall(id: "b", name: "stuck", arguments: "{}")]), .text("Done."),
        ])
        let agent = Agent(model: model, instructions: "", tools: ToolRegistry([first, stuck]), options: AgentOptions(toolTimeout: .seconds(600), fillerDelay: nil))
        let events = try await agentTestDeadline {
            var events: [AgentEvent] = []
            let watcher = Task {
                await bothStarted.waitForArrivals(2)
                bothStarted.open()
            }
            for try await event in agent.run(history: [.user("go")]) { events.append(event) }
            watcher.cancel()
            return events
        }
        #expect(events.contains(.toolCallFinished(ToolCall(id: "a", name: "first", arguments: "{}"), output: "one", isError: false)))
        #expect(events.contains { event in
            if case .toolCallFinished(let call, let output, true) = event { call.id == "b" && output.contains("did not finish") } else { false }
        })
    }

    @Test func theFillerIsSaidOnceATurnAfterTheDelayAndStoredAsSaid() async throws {
        let gate = AsyncGate()
        let tool = GatedTool(gate: gate)
        let model = ScriptedLanguageModel(replies: [
            .toolCalls([ToolCall(id: "c1", name: "slow_lookup", arguments: "{}")]),
            .toolCalls([ToolCall(id: "c2", name: "slow_lookup", arguments: "{}")]),
            .text("All booked."),
        ])
        let (session, recorder) = Self.session(model: model, tools: [tool], fillerDelay: .milliseconds(20))
        try await Self.speakOneTurn(into: session)
        await gate.waitForArrivals(1)
        let saidFiller: @Sendable (VoiceSessionEvent) -> Bool = {
            if case .agentTextDelta(_, _, "Let me check that. ") = $0 { true } else { false }
        }
        #expect(await recorder.waitFor(saidFiller))
        gate.open()
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        #expect(await recorder.count(saidFiller) == 1)
        let replies = await session.ledger.messages.compactMap { message -> String? in
            if case .assistant(let text, [], _) = message { text } else { nil }
        }
        #expect(replies == ["Let me check that. All booked."])
    }

    @Test func noFillerBeforeTheDelay() async throws {
        let gate = AsyncGate()
        let tool = GatedTool(gate: gate)
        let model = ScriptedLanguageModel(replies: [.toolCalls([ToolCall(id: "c1", name: "slow_lookup", arguments: "{}")]), .text("Booked.")])
        let (session, recorder) = Self.session(model: model, tools: [tool], fillerDelay: .seconds(600))
        try await Self.speakOneTurn(into: session)
        await gate.waitForArrivals(1)
        gate.open()
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        #expect(await recorder.count { if case .agentTextDelta(_, _, let delta) = $0 { delta.contains("check") } else { false } } == 0)
    }

    @Test func theFillerIsInterruptible() async throws {
        let gate = AsyncGate()
        let tool = GatedTool(gate: gate)
        let model = ScriptedLanguageModel(replies: [.toolCalls([ToolCall(id: "c1", name: "slow_lookup", arguments: "{}")]), .text("Booked.")])
        let (session, recorder) = Self.session(model: model, tools: [tool], fillerDelay: .milliseconds(20))
        try await Self.speakOneTurn(into: session)
        #expect(await recorder.waitFor(Match.audio))
        // Over 900 ms of speech interrupts once its words so far are known (InterruptionPolicy):
        // "Did it work?" is transcribed then, and again as the turn.
        try await session.appendAudio(ScenarioAudio.speech(milliseconds: 1_000), sampleRate: 16_000)
        #expect(await recorder.waitFor(Match.responseDone(.cancelled)))
        let interrupted = await recorder.events.contains { event in
            if case .itemCompleted(_, .assistant(_, [], true)) = event { true } else { false }
        }
        #expect(interrupted)
        gate.open()
        #expect(await recorder.waitFor(Self.isToolResult("c1")))
    }
}

/// A tool with its own timeout.
private struct TimedTool: Tool {
    let name: String
    let description = "A tool with a timeout."
    let parameters: JSONValue = ["type": "object"]
    let timeout: Duration?
    let body: @Sendable () async throws -> String

    init(name: String, timeout: Duration, body: @escaping @Sendable () async throws -> String) {
        self.name = name
        self.timeout = timeout
        self.body = body
    }

    func call(arguments: JSONValue) async throws -> String { try await body() }
}
