import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyCLI

/// `parley chat` driven through standard input with scripted language models.
@Suite("parley chat")
struct ChatCommandTests {
    private static let calculation = ToolCall(id: "call_1", name: "calculate", arguments: #"{"expression":"6*7"}"#)

    /// The text of every user and assistant message of a request, in order.
    private static func transcript(_ request: ChatRequest) -> [String] {
        request.messages.compactMap { message in
            switch message {
            case .user(let parts): parts.compactMap { if case .text(let text) = $0 { "user: \(text)" } else { nil } }.first
            case .assistant(let text, let calls, _): calls.isEmpty ? "assistant: \(text)" : "assistant calls \(calls.map(\.name))"
            case .tool(_, let content): "tool: \(content)"
            case .system: nil
            }
        }
    }

    @Test("in process: streamed replies, tools shown as they run, history kept, /reset, /exit")
    func inProcess() async throws {
        let model = ScriptedLanguageModel(replies: [
            .toolCalls([Self.calculation]),
            .text("It is 42."),
            .text("You asked about 6 times 7."),
            .text("Hello again."),
        ])
        let agent = Agent(model: model, instructions: "Be brief.", tools: ToolRegistry([CalculatorTool()]), options: AgentOptions(fillerDelay: nil))
        let (context, output, errorOutput) = CommandRun.capturing(
            input: "What is 6 times 7?\n\nWhat did I ask?\n/help\n/bogus\n/reset\nHi\n/exit\nnever sent\n"
        )
        try await ChatLoop(backend: InProcessChat(agent: agent, description: "a scripted model"), context: context).run()

        #expect(output.value == "It is 42.\nYou asked about 6 times 7.\nHello again.\n")
        #expect(errorOutput.value == """
            → calculate {"expression":"6*7"}
            ← calculate done: 42
            /reset starts a new conversation, /exit leaves (so does the end of the input).
            Unknown command /bogus; /reset starts over, /exit leaves.
            Started a new conversation.

            """)
        let requests = model.requests
        #expect(requests.count == 4)
        #expect(Self.transcript(requests[2]) == [
            "user: What is 6 times 7?", "assistant calls [\"calculate\"]", "tool: 42", "assistant: It is 42.", "user: What did I ask?",
        ])
        #expect(Self.transcript(requests[3]) == ["user: Hi"], "/reset forgets the history")
        #expect(requests[0].messages.first == .system("Be brief."))
    }

    @Test("in process: a failed turn is reported, the chat goes on, and piped input then exits 1")
    func failedTurn() async throws {
        let model = ScriptedLanguageModel(replies: [
            .failure(ProviderError(.rateLimited, provider: "openai-chat", message: "Slow down.")),
            .text("Fine now."),
        ])
        let agent = Agent(model: model, instructions: "Be brief.", options: AgentOptions(fillerDelay: nil))
        let (context, output, errorOutput) = CommandRun.capturing(input: "One\nTwo\n")
        await #expect(throws: CommandFailure.alreadyReported) {
            try await ChatLoop(backend: InProcessChat(agent: agent, description: "a scripted model"), context: context).run()
        }
        #expect(output.value == "Fine now.\n")
        #expect(errorOutput.value == "error: openai-chat: Slow down.\n")
        #expect(Self.transcript(model.requests[1]) == ["user: Two"], "the failed turn left no trace in the history")
    }

    @Test("on a terminal: a greeting, a prompt before each line")
    func terminal() async throws {
        let agent = Agent(model: ScriptedLanguageModel(replies: [.text("Hi!")]), instructions: "Be brief.")
        let (context, output, errorOutput) = CommandRun.capturing(environment: ["NO_COLOR": "1"], input: "Hello\n", terminal: true)
        try await ChatLoop(backend: InProcessChat(agent: agent, description: "a scripted model"), context: context).run()
        #expect(output.value == "Hi!\n")
        #expect(errorOutput.value == "Chatting with a scripted model. /reset starts over, /exit leaves.\nyou› you› ")
    }

    @Test("--url: through a running server's realtime endpoint, with its agent's tools")
    func remote() async throws {
        let model = ScriptedLanguageModel(replies: [
            .text("Hello from the server."),
            .toolCalls([Self.calculation]),
            .text("It is 42."),
            .text("Fresh start."),
        ])
        let server = try CLITestServer.start(languageModel: model)
        let created = await CommandRun.run(["agents", "create", "--name", "Calc", "--tools", "calculate"], environment: server.environment)
        let agentID = try #require(try JSONValue(parsing: created.output)["id"]?.stringValue)

        let run = await CommandRun.run(
            ["chat", "--url", server.url, "--agent", agentID],
            environment: ["PARLEY_SERVER_SECRET": CLITestServer.secret],
            input: "Hello\nWhat is 6 times 7?\n/reset\nAnyone there?\n"
        )
        #expect(run.status == 0, "\(run.errorOutput)")
        #expect(run.output == "Hello from the server.\nIt is 42.\nFresh start.\n")
        #expect(run.errorOutput == "→ calculate\n← calculate done\nStarted a new conversation.\n")
        let requests = model.requests
        #expect(requests.count == 4)
        #expect(Self.transcript(requests[1]).first == "user: Hello", "the server keeps the history")
        #expect(Self.transcript(requests[3]) == ["user: Anyone there?"], "/reset opens a new conversation")
        await server.stop()
    }

    @Test("--url: an unreachable server is one line, exit 1")
    func unreachable() async throws {
        let closed = try ClosedPort()
        defer { withExtendedLifetime(closed) {} }
        let port = closed.port
        let run = await CommandRun.run(
            ["chat", "--url", "http://127.0.0.1:\(port)"], environment: ["PARLEY_SERVER_SECRET": CLITestServer.secret], input: "Hi\n"
        )
        #expect(run.status == 1)
        #expect(run.output.isEmpty)
        #expect(run.errorOutput.hasPrefix("error: cannot open a realtime session at ws://127.0.0.1:\(port)/v1/realtime?parley_events=true: "))
        #expect(run.errorOutput.filter { $0 == "\n" }.count == 1)
    }
}
