import Foundation
import ParleyCore
import ParleyOpenAI
import ParleyServer
import ParleyTesting
import Testing

/// The realtime endpoint driven by the clients people already use — openai-agents, pipecat and
/// LiveKit Agents, installed from PyPI by `scripts/setup` — each through its own public API.
///
/// Parley runs in process with its real OpenAI-compatible language model pointed at a scripted
/// upstream (`FakeConversationalChat`) that answers the question asked, calls the client's
/// `get_weather` tool when asked to, and tells a long story to interrupt. Each harness in
/// `Tests/Conformance/clients` prints `ok NAME` or `FAIL NAME: reason` per scenario and fails
/// on any client-side validation error, error event, failed response or timeout.
@Suite(.serialized) struct RealClientConformanceTests {
    static let clients = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Conformance/clients").standardizedFileURL

    /// What the scripted recognizer hears in every utterance.
    static let spokenQuestion = "what is the capital of France"

    @Test func openAIAgents() async throws {
        try await Stack.with { stack in
            let scenarios = ["text_turns", "spoken_question", "interrupt", "barge_in", "tool_auto", "tool_required"]
            try await stack.run("openai_agents_harness.py", scenarios)
            // The session's `tool_choice: required` must reach the model, not be replaced by `auto`.
            let choices = stack.upstream.requests.compactMap { $0.json?["tool_choice"] }
            #expect(choices.contains(.string("required")), "tool_choice sent upstream: \(choices)")
        }
    }

    @Test func pipecat() async throws {
        try await Stack.with { stack in
            try await stack.run("pipecat_harness.py", ["text_turn", "spoken_turn", "interruption", "cancel"])
        }
    }

    @Test func livekit() async throws {
        try await Stack.with { stack in
            try await stack.run("livekit_harness.py", ["consecutive_replies", "spoken_turn", "interruption", "tool_call", "tool_call_named"])
            // `generate_reply(tool_choice=…)` must reach the model as it was asked.
            let choices = stack.upstream.requests.compactMap { $0.json?["tool_choice"] }
            let named: JSONValue = ["type": "function", "function": ["name": "get_weather"]]
            #expect(choices.contains(.string("required")) && choices.contains(named), "tool_choice sent upstream: \(choices)")
            // Each `generate_reply(instructions=…)` reached the model with its own instructions.
            let conversations = stack.upstream.requests.compactMap { $0.json?["messages"]?.jsonText }
            for instructions in ["Answer briefly.", "Count carefully.", "Be cheerful."] {
                #expect(conversations.contains { $0.contains(instructions) }, "no request carried \(instructions)")
            }
        }
    }

    @Test func outOfBandResponse() async throws {
        try await Stack.with { stack in
            try await stack.run("openai_agents_harness.py", ["out_of_band"])
            // The model saw only the out-of-band input, and the next turn saw nothing of it.
            let conversations = stack.upstream.requests.compactMap { $0.json?["messages"]?.jsonText }
            let outOfBand = conversations.filter { $0.contains("the cat sat on the mat") }
            #expect(outOfBand.count == 1 && !outOfBand[0].contains("two plus two"), "\(conversations)")
            #expect(conversations.last.map { !$0.contains("the cat sat") && $0.contains("two plus two") } == true, "\(conversations)")
        }
    }
}

/// A Parley server whose language model is the OpenAI-compatible provider in front of a
/// `FakeOpenAIServer` answering with `FakeConversationalChat`.
private struct Stack {
    let upstream: FakeOpenAIServer
    let server: TestServer

    init() throws {
        upstream = try FakeOpenAIServer()
        upstream.setChatResponder(FakeConversationalChat.reply(to:))
        let model = OpenAILanguageModel(configuration: OpenAIConfiguration(
            baseURL: upstream.baseURL, apiKey: "upstream-key", model: "fake-model"
        ))
        server = try TestServer.start(providers: ProviderSet(
            recognizer: FixedSpeechRecognizer(text: RealClientConformanceTests.spokenQuestion),
            languageModel: model,
            synthesizer: ScriptedSpeechSynthesizer(millisecondsPerWord: 100),
            makeVoiceActivityDetector: { EnergyVAD() },
            makeResampler: { from, to in try! LinearResampler(from: from, to: to) },
            // openai-agents and LiveKit ask for semantic_vad by default: the server has Smart Turn, as setup installs it.
            turnCompletionModel: ProviderFactory.turnCompletionModel(ServerSettings()).model
        ))
    }

    /// Runs `body` with a fresh stack and stops it afterwards, whatever happened.
    static func with(_ body: (Stack) async throws -> Void) async throws {
        let stack = try Stack()
        do {
            try await body(stack)
        } catch {
            await stack.stop()
            throw error
        }
        await stack.stop()
    }

    /// Runs a harness against the server and expects every scenario to pass.
    func run(_ harness: String, _ scenarios: [String]) async throws {
        let result = try await ChildProcess.run(
            ChildProcess.python,
            [RealClientConformanceTests.clients.appendingPathComponent(harness).path,
             "--url", "ws://127.0.0.1:\(server.port)/v1/realtime", "--token", server.clientToken(),
             "--spoken", RealClientConformanceTests.spokenQuestion] + scenarios,
            deadline: .seconds(300)
        )
        let failed = scenarios.filter { !result.output.contains("ok \($0)\n") }
        #expect(result.status == 0 && failed.isEmpty, "\(harness): not ok \(failed)\n\(result.output)")
    }

    func stop() async {
        await server.stop()
        await upstream.shutdown()
    }
}
