import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyCLI

/// `parley eval` without `--url`: a server in the process with the engines the `PARLEY_*`
/// settings choose, here all three at the fake OpenAI server on a free port.
@Suite("parley eval in process")
struct EvalInProcessTests {
    @Test("a typed scenario runs on the in-process server; the reply comes from the configured chat API")
    func typedScenario() async throws {
        let upstream = try FakeOpenAIServer()
        upstream.setFallback(
            chat: .text(["It is ", "42."]), transcription: .text("unused"),
            speech: .samples(Array(repeating: 500, count: 24_000))
        )
        let work = try TemporaryDirectory()
        defer { work.remove() }
        try #"{"scenarios": [{"name": "answers", "turns": [{"text": "Six times seven?", "expect": {"reply_contains": "42", "no_tool_called": true}}]}]}"#
            .write(toFile: work.path("answers.json"), atomically: true, encoding: .utf8)
        let url = upstream.baseURL.absoluteString
        let run = await CommandRun.run(["eval", "answers.json"], environment: [
            "PARLEY_LLM_URL": url, "PARLEY_LLM_MODEL": "fake-chat",
            "PARLEY_ASR_URL": url, "PARLEY_TTS_URL": url, "PARLEY_TTS_VOICE": "alloy",
        ], directory: work.url)
        await upstream.shutdown()
        #expect(run.status == 0, "\(run.output)\(run.errorOutput)")
        #expect(run.output.contains("answers   1 text  pass    \"Six times seven?\" -> \"It is 42.\""), "\(run.output)")
    }
}
