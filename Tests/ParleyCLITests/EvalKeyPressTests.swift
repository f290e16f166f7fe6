import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyCLI

/// `keys` turns of `parley eval` (`Examples/evals/key-presses.json` among them) against a real
/// server on a free port whose phone menu agent answers by the keys it is told of.
@Suite("parley eval key presses")
struct EvalKeyPressTests {
    /// A phone menu: answers a key press by the keys the caller pressed, and anything else with the menu.
    struct KeypadMenuModel: LanguageModel {
        func stream(_ request: ChatRequest) -> AsyncThrowingStream<LanguageModelEvent, any Error> {
            let reply = Self.reply(to: request.messages)
            return AsyncThrowingStream { continuation in
                continuation.yield(.textDelta(reply))
                continuation.yield(.finished(.stop, nil))
                continuation.finish()
            }
        }

        private static func reply(to messages: [ChatMessage]) -> String {
            let presses = messages.compactMap { message in PhoneKeypad.keys.first { PhoneKeypad.message(forKey: String($0)) == message } }
            guard let last = messages.last, let key = presses.last, last == PhoneKeypad.message(forKey: String(key)) else {
                return "Press 1 for sales or 2 for billing."
            }
            switch key {
            case "1": return "You chose sales."
            case "2": return "You chose billing."
            case "#": return "You entered \(String(presses.dropLast())), thank you."
            default: return "You pressed \(key)."
            }
        }
    }

    /// A server with the menu agent (told of key presses when `keyPressMessages`), made with `parley agents create`.
    struct Menu {
        let server: CLITestServer
        let work: TemporaryDirectory
        let agentID: String

        static func start(keyPressMessages: Bool) async throws -> Menu {
            let server = try CLITestServer.start(languageModel: KeypadMenuModel())
            let work = try TemporaryDirectory()
            try #"{"name": "Phone menu", "filler_delay_ms": 0, "telephony": {"key_press_messages": \#(keyPressMessages)}}"#
                .write(toFile: work.path("menu.json"), atomically: true, encoding: .utf8)
            let created = await CommandRun.run(["agents", "create", "menu.json"], environment: server.environment, directory: work.url)
            #expect(created.status == 0, "\(created.errorOutput)")
            let agentID = try #require(try JSONValue(parsing: created.output)["id"]?.stringValue)
            return Menu(server: server, work: work, agentID: agentID)
        }

        /// Runs `parley eval` on `file` against the menu agent, with a JSON report.
        func eval(_ file: String) async -> CommandRun {
            await CommandRun.run(
                ["eval", file, "--url", server.url, "--agent", agentID, "--json", "report.json"], environment: server.environment, directory: work.url
            )
        }

        /// The turns of each scenario's first run in the JSON report.
        func reportedTurns() throws -> [[JSONValue]] {
            let report = try JSONValue(parsing: String(contentsOfFile: work.path("report.json"), encoding: .utf8))
            guard case .array(let scenarios)? = report["files"]?.element(0)?["scenarios"] else { return [] }
            return scenarios.map { scenario in
                guard case .array(let turns)? = scenario["runs"]?.element(0)?["turns"] else { return [] }
                return turns
            }
        }

        func stop() async {
            await server.stop()
            work.remove()
        }
    }

    static let example = EvalExampleFilesTests.directory.appendingPathComponent("key-presses.json").path

    @Test("the example passes: key 2 is answered with billing, and 12# with the reply to the last key, which heard all three")
    func examplePasses() async throws {
        let menu = try await Menu.start(keyPressMessages: true)
        defer { Task { await menu.stop() } }
        let run = await menu.eval(Self.example)
        #expect(run.status == 0, "\(run.output)\(run.errorOutput)")
        #expect(run.output.contains("2 keys  pass    \"pressed 2\" -> \"You chose billing.\""), "\(run.output)")
        #expect(run.output.hasSuffix("All scenario runs passed: 2/2 passed (100 %)\n"), "\(run.output)")
        let turns = try menu.reportedTurns()
        let billing = try #require(turns.first?.last)
        #expect(billing["kind"] == .string("keys"))
        #expect(billing["caller_said"] == .string("pressed 2"))
        #expect(billing["reply"] == .string("You chose billing."))
        #expect((billing["timings"]?["reply_started_after_ms"]?.numberValue ?? -1) >= 0)
        let account = try #require(turns.last?.last)
        #expect(account["reply"] == .string("You entered 12, thank you."), "the reply to # alone, not to 1 or 2")
        #expect(account["response_status"] == .string("completed"))
    }

    @Test("keys pressed with no wait between them: each press cuts the reply before, the turn's reply is the last key's")
    func keysWithoutAWait() async throws {
        let menu = try await Menu.start(keyPressMessages: true)
        defer { Task { await menu.stop() } }
        try #"{"scenarios": [{"name": "fast", "turns": [{"keys": "21#", "inter_key_ms": 0, "expect": {"reply_contains": "entered 21"}}]}]}"#
            .write(toFile: menu.work.path("fast.json"), atomically: true, encoding: .utf8)
        let run = await menu.eval("fast.json")
        #expect(run.status == 0, "\(run.output)\(run.errorOutput)")
        let turn = try #require(try menu.reportedTurns().first?.first)
        #expect(turn["reply"] == .string("You entered 21, thank you."))
    }

    /// The turn ends on the server's refusal (its reason says so), not on the turn's time limit.
    @Test("against an agent that is not told of key presses the turn fails on the server's refusal, naming the setting")
    func agentWithoutKeyPresses() async throws {
        let menu = try await Menu.start(keyPressMessages: false)
        defer { Task { await menu.stop() } }
        let run = await menu.eval(Self.example)
        #expect(run.status == 1, "\(run.output)\(run.errorOutput)")
        #expect(run.output.contains(
            "2 keys  FAIL    the server refused the key press: This session's agent does not take key presses: set the agent's telephony.key_press_messages to true."
        ), "\(run.output)")
        #expect(run.output.hasSuffix("Scenario runs: 0/2 passed (0 %)\n"), "\(run.output)")
    }
}
