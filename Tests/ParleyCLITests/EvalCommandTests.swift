import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyCLI

/// `parley eval` against a real server on a free port whose sessions run a scripted model,
/// hear scripted transcripts and speak with a scripted synthesizer.
@Suite("parley eval")
struct EvalCommandTests {
    private static let calculation = ToolCall(id: "call_1", name: "calculate", arguments: #"{"expression":"6*7"}"#)

    /// A server, a directory with scenario files, and an agent with the calculator.
    struct Fixture {
        let server: CLITestServer
        let work: TemporaryDirectory
        let agentID: String

        static func start(
            _ model: ScriptedLanguageModel, heard: [String] = [], hearing: (any SpeechRecognizer)? = nil, sileroVAD: Bool = false
        ) async throws -> Fixture {
            let server = try CLITestServer.start(languageModel: model, heard: heard, hearing: hearing, sileroVAD: sileroVAD)
            let work = try TemporaryDirectory()
            // No filler: on a loaded machine the tool can outlast its delay, and these tests are about the turn.
            try Data(#"{"filler_delay_ms": 0}"#.utf8).write(to: work.url.appendingPathComponent("agent.json"))
            let created = await CommandRun.run(
                ["agents", "create", "agent.json", "--name", "Calc", "--tools", "calculate"], environment: server.environment, directory: work.url
            )
            let agentID = try #require(try JSONValue(parsing: created.output)["id"]?.stringValue)
            return Fixture(server: server, work: work, agentID: agentID)
        }

        /// Writes a scenario file whose scenarios call the agent.
        func write(_ name: String, _ scenarios: String) throws {
            try #"{"agent": "\#(agentID)", "scenarios": \#(scenarios)}"#.write(toFile: work.path(name), atomically: true, encoding: .utf8)
        }

        /// Runs `parley eval` against the server.
        func eval(_ arguments: [String]) async -> CommandRun {
            await CommandRun.run(["eval"] + arguments + ["--url", server.url], environment: server.environment, directory: work.url)
        }

        /// The JSON report at `name`.
        func report(_ name: String) throws -> JSONValue {
            try JSONValue(parsing: String(contentsOfFile: work.path(name), encoding: .utf8))
        }

        /// The turns of the first run of the first scenario in the JSON report at `name`.
        func reportedTurns(_ name: String) throws -> [JSONValue] {
            let run = try report(name)["files"]?.element(0)?["scenarios"]?.element(0)?["runs"]?.element(0)
            guard case .array(let turns)? = run?["turns"] else { return [] }
            return turns
        }

        func stop() async {
            await server.stop()
            work.remove()
        }
    }

    @Test("a typed scenario that passes: the tool with its arguments, the reply, exit 0, the JSON report's transcript")
    func passingTypedScenario() async throws {
        let fixture = try await Fixture.start(ScriptedLanguageModel(replies: [.toolCalls([Self.calculation]), .text("It is 42.")]))
        defer { Task { await fixture.stop() } }
        try fixture.write("calc.json", """
            [{"name": "multiplies", "turns": [
              {"text": "What is six times seven?", "expect": {
                "tool_called": {"name": "calculate", "arguments_contain": {"expression": "6*7"}},
                "reply_contains": "42", "reply_matches": "^It is \\\\d+\\\\.$", "reply_started_within_ms": 10000}}
            ]}]
            """)
        let run = await fixture.eval(["calc.json", "--json", "report.json"])
        #expect(run.status == 0, "\(run.output)\(run.errorOutput)")
        #expect(run.output.contains("multiplies  1 text  pass    \"What is six times seven?\" -> \"It is 42.\""), "\(run.output)")
        #expect(run.output.contains("  multiplies: 1/1 passed (100 %)"))
        #expect(run.output.hasSuffix("All scenario runs passed: 1/1 passed (100 %)\n"))
        let turn = try #require(try fixture.reportedTurns("report.json").first)
        #expect(turn["heard"] == .string("What is six times seven?"))
        #expect(turn["reply"] == .string("It is 42."))
        #expect(turn["tool_calls"] == .array([.object(["name": .string("calculate"), "arguments": .string(#"{"expression":"6*7"}"#)])]))
        #expect((turn["timings"]?["reply_started_after_ms"]?.numberValue ?? -1) >= 0)
        #expect(turn["timings"]?["reply_audio_ms"] == .number(300), "three words of 100 ms")
    }

    @Test("a scenario that fails names the expectation and why, and exits 1")
    func failingScenario() async throws {
        let fixture = try await Fixture.start(ScriptedLanguageModel(replies: [.toolCalls([Self.calculation]), .text("It is 42.")]))
        defer { Task { await fixture.stop() } }
        try fixture.write("calc.json", """
            [{"name": "wrong sum", "turns": [
              {"text": "What is six times eight?", "expect": {
                "reply_contains": "42", "tool_called": {"name": "calculate", "arguments_contain": {"expression": "6*8"}}}}
            ]}]
            """)
        let run = await fixture.eval(["calc.json"])
        #expect(run.status == 1)
        #expect(run.output.contains(#"wrong sum  1 text  FAIL    tool_called calculate {"expression":"6*8"}: calculate was called with {"expression":"6*7"}: expression is "6*7", not "6*8""#), "\(run.output)")
        #expect(run.output.hasSuffix("Scenario runs: 0/1 passed (0 %)\n"))
        #expect(run.errorOutput.isEmpty, "the table says it all: \(run.errorOutput)")
    }

    @Test("a spoken scenario: the caller's words in the flite voice, what the server heard, the spoken reply")
    func spokenScenario() async throws {
        let fixture = try await Fixture.start(ScriptedLanguageModel(replies: [.text("Hello, how can I help?")]), heard: ["hello there I need help"])
        defer { Task { await fixture.stop() } }
        try fixture.write("hello.json", """
            [{"name": "greets", "turns": [
              {"say": ["Hello there.", "I need help."], "pause_ms": 800, "voice": "flite",
               "expect": {"reply_contains": "help", "no_tool_called": true}}
            ]}]
            """)
        let run = await fixture.eval(["hello.json", "--json", "report.json"])
        #expect(run.status == 0, "\(run.output)\(run.errorOutput)")
        let turn = try #require(try fixture.reportedTurns("report.json").first)
        #expect(turn["kind"] == .string("say"))
        #expect(turn["caller_said"] == .string("Hello there. I need help."))
        #expect(turn["heard"] == .string("hello there I need help"))
        #expect(turn["reply"] == .string("Hello, how can I help?"))
        let utterances = fixture.server.recognizer.finalUtteranceSampleCounts
        #expect(utterances.count == 1, "the fragments and their pause are one utterance")
        #expect((utterances.first ?? 0) > 16_000 * 2, "two spoken fragments and 0.8 s of silence: over 2 s at 16 kHz")
    }

    @Test("a WAV turn: the recording (44.1 kHz stereo, next to the scenario file) is sent as one utterance")
    func wavScenario() async throws {
        let fixture = try await Fixture.start(ScriptedLanguageModel(replies: [.text("Yes, we are open.")]), heard: ["are you open today"])
        defer { Task { await fixture.stop() } }
        try FileManager.default.createDirectory(atPath: fixture.work.path("calls"), withIntermediateDirectories: true)
        try TalkCommandTests.writeTone(fixture.work.path("calls/open.wav"), seconds: 1.5, sampleRate: 44_100, channels: 2)
        try fixture.write("calls/open.json", #"[{"name": "open", "turns": [{"wav": "open.wav", "expect": {"reply_contains": "open"}}]}]"#)
        let run = await fixture.eval(["calls/open.json"])
        #expect(run.status == 0, "\(run.output)\(run.errorOutput)")
        #expect(run.output.contains("open      1 wav  pass    \"are you open today\" -> \"Yes, we are open.\""), "\(run.output)")
        let utterance = fixture.server.recognizer.finalUtteranceSampleCounts.first ?? 0
        #expect(abs(utterance - 24_000) < 1_000, "1.5 s at the recognizer's 16 kHz: \(utterance)")
    }

    @Test("an interruption cuts the reply: the server cancels it, the next turn is heard and answered")
    func interruptionScenario() async throws {
        let longReply = Array(repeating: "and then", count: 20).joined(separator: " ") + " done."
        let fixture = try await Fixture.start(ScriptedLanguageModel(replies: [.text(longReply), .text("Sorry, stopping.")]), heard: ["wait stop"])
        defer { Task { await fixture.stop() } }
        try fixture.write("stop.json", """
            [{"name": "stops when interrupted", "turns": [
              {"text": "Tell me a long story.", "expect": {"interrupted": true}},
              {"interrupt": "Wait, stop.", "after_reply_ms": 300, "voice": "flite", "expect": {"reply_contains": "stopping", "interrupted": false}}
            ]}]
            """)
        let run = await fixture.eval(["stop.json", "--json", "report.json"])
        #expect(run.status == 0, "\(run.output)\(run.errorOutput)")
        let turns = try fixture.reportedTurns("report.json")
        #expect(turns.first?["interrupted"] == .bool(true))
        let cutAt = turns.first?["timings"]?["interrupted_at_audio_ms"]?.numberValue ?? 0
        #expect(cutAt >= 300 && cutAt < 4_100, "cut after 300 ms of the 4.1 s reply: \(cutAt)")
        let sent = turns.first?["timings"]?["reply_audio_ms"]?.numberValue ?? 0
        #expect(sent < 2_000, "the speech after the cut is not sent: \(sent) ms of 4,100 arrived")
        #expect(turns.last?["heard"] == .string("wait stop"))
        #expect(turns.last?["reply"] == .string("Sorry, stopping."))
    }

    @Test("--repeat runs each scenario again and reports pass rates; the exit code follows --min-pass-rate")
    func repeatPassRates() async throws {
        let model = ScriptedLanguageModel(replies: [.text("It is 42."), .text("No idea."), .text("It is 42."), .text("It is 42."), .text("No idea."), .text("It is 42.")])
        let fixture = try await Fixture.start(model)
        defer { Task { await fixture.stop() } }
        try fixture.write("flaky.json", #"[{"name": "answers", "turns": [{"text": "Six times seven?", "expect": {"reply_contains": "42"}}]}]"#)
        let strict = await fixture.eval(["flaky.json", "--repeat", "3"])
        #expect(strict.status == 1)
        #expect(strict.output.contains("answers #2  1 text  FAIL    reply_contains \"42\": the reply was \"No idea.\""), "\(strict.output)")
        #expect(strict.output.contains("  answers: 2/3 passed (67 %)"))
        let lenient = await fixture.eval(["flaky.json", "--repeat", "3", "--min-pass-rate", "60", "--json", "report.json"])
        #expect(lenient.status == 0, "\(lenient.output)")
        #expect(try fixture.report("report.json")["pass_rate"]?["text"] == .string("2/3 passed (67 %)"))
    }

    @Test("the JUnit XML reads back with junitparser: a suite per file, a case per run, the failure's message")
    func junitReadBack() async throws {
        let fixture = try await Fixture.start(ScriptedLanguageModel(replies: [], fallback: .text("It is 42.")))
        defer { Task { await fixture.stop() } }
        try fixture.write("first.json", """
            [{"name": "right", "turns": [{"text": "Six times seven?", "expect": {"reply_contains": "42"}}]},
             {"name": "wrong <&>", "turns": [{"text": "Six times eight?", "expect": {"reply_contains": "48"}}]}]
            """)
        try fixture.write("second.json", #"[{"name": "typed", "turns": [{"text": "Hi", "expect": {"no_tool_called": true}}]}]"#)
        let run = await fixture.eval(["first.json", "second.json", "--repeat", "2", "--junit", "eval.xml"])
        #expect(run.status == 1)
        let script = """
            import sys
            from junitparser import JUnitXml, Failure
            xml = JUnitXml.fromfile(sys.argv[1])
            for suite in xml:
                print(f"suite {suite.name} tests={suite.tests} failures={suite.failures}")
                for case in suite:
                    failures = [r for r in case.result if isinstance(r, Failure)]
                    print(f"  case {case.name}: " + (failures[0].message if failures else "passed"))
            """
        let python = try await ParleyProcess.run(program: URL(fileURLWithPath: Self.python), ["-c", script, fixture.work.path("eval.xml")])
        #expect(python.status == 0, "\(python.errorOutput)")
        #expect(python.output == """
            suite first.json tests=4 failures=2
              case right #1: passed
              case right #2: passed
              case wrong <&> #1: turn 1: reply_contains "48": the reply was "It is 42."
              case wrong <&> #2: turn 1: reply_contains "48": the reply was "It is 42."
            suite second.json tests=2 failures=0
              case typed #1: passed
              case typed #2: passed

            """)
    }

    @Test("Examples/evals/built-in-tools.json passes against an agent with the calculator and the clock")
    func builtInToolsExample() async throws {
        let story = Array(repeating: "and then", count: 20).joined(separator: " ") + " done."
        let model = ScriptedLanguageModel(replies: [
            .toolCalls([ToolCall(id: "call_1", name: "calculate", arguments: #"{"expression":"612/4"}"#)]), .text("It is 153."),
            .toolCalls([ToolCall(id: "call_2", name: "get_current_time", arguments: #"{"timezone":"Europe/Paris"}"#)]), .text("It is 14:05 in Paris."),
            .text("I'm well, thanks! How can I help?"),
            .text(story),
            .toolCalls([ToolCall(id: "call_3", name: "calculate", arguments: #"{"expression":"6*7"}"#)]), .text("It is 42."),
        ])
        let fixture = try await Fixture.start(model, heard: [
            "what is six hundred and twelve divided by four", "hi there I was just wondering how you are today",
            "wait stop just tell me what six times seven is",
        ])
        defer { Task { await fixture.stop() } }
        let update = await CommandRun.run(
            ["agents", "update", fixture.agentID, "--tools", "calculate,get_current_time"], environment: fixture.server.environment, directory: fixture.work.url
        )
        #expect(update.status == 0, "\(update.errorOutput)")
        let example = EvalExampleFilesTests.directory.appendingPathComponent("built-in-tools.json").path
        let run = await CommandRun.run(
            ["eval", example, "--url", fixture.server.url, "--agent", fixture.agentID, "--json", "report.json"],
            environment: fixture.server.environment.merging(["PARLEY_TTS": "flite"]) { _, new in new }, directory: fixture.work.url
        )
        #expect(run.errorOutput.isEmpty, "\(run.errorOutput)")
        // Every expectation holds but the latency bound, which a loaded test machine can miss:
        // it is meant for a real stack, and the measured start is in the report either way.
        guard case .array(let scenarios)? = try fixture.report("report.json")["files"]?.element(0)?["scenarios"] else {
            Issue.record("no scenarios in the report: \(run.output)")
            return
        }
        #expect(scenarios.count == 4)
        for scenario in scenarios {
            guard case .array(let turns)? = scenario["runs"]?.element(0)?["turns"] else { continue }
            for turn in turns {
                guard case .array(let outcomes)? = turn["expectations"] else { continue }
                for outcome in outcomes where outcome["passed"] != .bool(true) {
                    #expect(outcome["expectation"]?.stringValue?.hasPrefix("reply_started_within_ms") == true, "\(run.output)")
                }
                #expect(turn["response_status"] != nil && turn["response_status"] != .null, "every turn was answered: \(run.output)")
            }
        }
    }

    @Test("an agent the server does not have, and a wrong secret, end the eval with one line")
    func refusedSessions() async throws {
        let fixture = try await Fixture.start(ScriptedLanguageModel(replies: []))
        defer { Task { await fixture.stop() } }
        try #"{"scenarios": [{"name": "hello", "turns": [{"text": "Hi"}]}]}"#.write(toFile: fixture.work.path("hello.json"), atomically: true, encoding: .utf8)
        let missing = await fixture.eval(["hello.json", "--agent", "agent_nobody"])
        #expect(missing.status == 1)
        #expect(missing.output.isEmpty)
        #expect(missing.errorOutput == "error: the server did not start a session: No agent agent_nobody.\n")
        let wrongSecret = await CommandRun.run(
            ["eval", "hello.json", "--url", fixture.server.url], environment: ["PARLEY_SERVER_SECRET": "not-the-secret-0123456789"], directory: fixture.work.url
        )
        #expect(wrongSecret.status == 1)
        #expect(wrongSecret.errorOutput == "error: the server refused the credentials for a realtime session (HTTP 401); check PARLEY_SERVER_SECRET\n")
    }

    @Test("a server that is down fails fast: one line, exit 1, no waiting for a timeout or retrying")
    func serverDown() async throws {
        let closed = try ClosedPort()
        let work = try TemporaryDirectory()
        defer { work.remove() }
        try #"{"scenarios": [{"name": "hello", "turns": [{"text": "Hi"}]}]}"#.write(toFile: work.path("hello.json"), atomically: true, encoding: .utf8)
        let started = ContinuousClock.now
        let run = await CommandRun.run(
            ["eval", "hello.json", "--url", "http://127.0.0.1:\(closed.port)", "--junit", "eval.xml"],
            environment: ["PARLEY_SERVER_SECRET": CLITestServer.secret], directory: work.url
        )
        let elapsed = ContinuousClock.now - started
        #expect(run.status == 1)
        #expect(run.output.isEmpty)
        #expect(run.errorOutput.hasPrefix("error: cannot open a realtime session at ws://127.0.0.1:\(closed.port)/v1/realtime?parley_events=true: "), "\(run.errorOutput)")
        #expect(run.errorOutput.filter { $0 == "\n" }.count == 1)
        // A refused connection ends the run at once; the bound only tells that from waiting out
        // a connect timeout or retrying (a loaded machine takes seconds to start the process).
        #expect(elapsed < .seconds(20), "\(elapsed)")
        #expect(!FileManager.default.fileExists(atPath: work.path("eval.xml")), "no report of runs that never were")
    }

    /// The Python with the test packages: `$PARLEY_PYTHON`, else the setup's venv.
    static var python: String {
        ProcessInfo.processInfo.environment["PARLEY_PYTHON"]
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/parley/venv/bin/python").path
    }
}

extension JSONValue {
    /// Element `index` of an array.
    func element(_ index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }
}
