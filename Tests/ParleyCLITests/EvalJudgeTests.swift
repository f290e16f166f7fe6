import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyCLI

/// The judge of `parley eval`: the configured OpenAI-compatible model (here the fake OpenAI
/// server on a free port) scores the conversation against the scenario's rubric.
@Suite("parley eval judge")
struct EvalJudgeTests {
    private static let scenario = """
        {"scenarios": [{"name": "polite", "turns": [{"text": "What is six times seven?"}],
                        "judge": {"rubric": "The agent answers the sum politely.", "pass_score": 7}}]}
        """

    private static func run(judgeAnswer: String) async throws -> (run: CommandRun, request: JSONValue?, report: JSONValue) {
        let upstream = try FakeOpenAIServer()
        upstream.enqueueChat(.text([judgeAnswer]))
        let server = try CLITestServer.start(languageModel: ScriptedLanguageModel(replies: [.text("It is 42, glad to help.")]))
        let work = try TemporaryDirectory()
        try scenario.write(toFile: work.path("polite.json"), atomically: true, encoding: .utf8)
        let environment = server.environment.merging([
            "PARLEY_LLM_URL": upstream.baseURL.absoluteString, "PARLEY_LLM_MODEL": "everyday-model", "PARLEY_LLM_API_KEY": "sk-judge",
        ]) { _, new in new }
        let run = await CommandRun.run(
            ["eval", "polite.json", "--url", server.url, "--judge-model", "strict-judge", "--json", "report.json"],
            environment: environment, directory: work.url
        )
        let report = try JSONValue(parsing: String(contentsOfFile: work.path("report.json"), encoding: .utf8))
        let request = upstream.requests.first?.json
        await server.stop()
        await upstream.shutdown()
        work.remove()
        return (run, request, report)
    }

    @Test("a score at the pass score passes; the judge model reads the rubric and the transcript")
    func passes() async throws {
        let (run, request, report) = try await Self.run(judgeAnswer: #"{"score": 9, "reason": "Correct and polite."}"#)
        #expect(run.status == 0, "\(run.output)\(run.errorOutput)")
        #expect(run.output.contains("polite    judge   pass    9/10 (pass at 7): Correct and polite."), "\(run.output)")
        #expect(request?["model"] == .string("strict-judge"))
        guard case .array(let messages)? = request?["messages"], let user = messages.last?["content"]?.stringValue else {
            Issue.record("no user message in \(String(describing: request))")
            return
        }
        #expect(user == """
            Rubric:
            The agent answers the sum politely.

            Transcript:
            Caller: What is six times seven?
            Agent: It is 42, glad to help.
            """)
        let judge = report["files"]?.element(0)?["scenarios"]?.element(0)?["runs"]?.element(0)?["judge"]
        #expect(judge == .object(["score": .number(9), "pass_score": .number(7), "passed": .bool(true), "reason": .string("Correct and polite.")]))
    }

    @Test("a low score fails the run with the judge's reason; an answer without a score fails it too")
    func fails() async throws {
        let low = try await Self.run(judgeAnswer: #"{"score": 4, "reason": "Curt."}"#)
        #expect(low.run.status == 1)
        #expect(low.run.output.contains("polite    judge   FAIL    4/10 (pass at 7): Curt."), "\(low.run.output)")
        let shapeless = try await Self.run(judgeAnswer: "Looks fine to me.")
        #expect(shapeless.run.status == 1)
        #expect(shapeless.run.output.contains("judge   FAIL    no score (pass at 7): the judge's answer has no score: Looks fine to me."), "\(shapeless.run.output)")
    }

    @Test("a rubric without PARLEY_LLM_URL is refused before any call")
    func needsAModel() async throws {
        let work = try TemporaryDirectory()
        defer { work.remove() }
        try Self.scenario.write(toFile: work.path("polite.json"), atomically: true, encoding: .utf8)
        let run = await CommandRun.run(
            ["eval", "polite.json", "--url", "http://127.0.0.1:9"], environment: ["PARLEY_SERVER_SECRET": CLITestServer.secret], directory: work.url
        )
        #expect(run.status == 1)
        #expect(run.errorOutput == "error: a judge needs PARLEY_LLM_URL: an OpenAI-compatible chat API to score with\n")
    }
}
