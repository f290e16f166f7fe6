import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyCLI

/// `Examples/evals/handoff.json` run by `parley eval` against a real server on a free port
/// whose triage agent may hand the caller to billing; a scripted model decides whether it does.
@Suite("parley eval handoffs")
struct EvalHandoffTests {
    /// A server with billing and triage (which may hand off to billing), created with `parley agents create`.
    struct Desk {
        let server: CLITestServer
        let work: TemporaryDirectory
        let triageID: String
        let billingID: String

        static func start(_ model: ScriptedLanguageModel) async throws -> Desk {
            let server = try CLITestServer.start(languageModel: model, heard: ["hello I was charged twice for my last order"])
            let work = try TemporaryDirectory()
            func create(_ name: String, _ definition: String) async throws -> String {
                try definition.write(toFile: work.path("\(name).json"), atomically: true, encoding: .utf8)
                let created = await CommandRun.run(["agents", "create", "\(name).json"], environment: server.environment, directory: work.url)
                #expect(created.status == 0, "\(created.errorOutput)")
                return try #require(try JSONValue(parsing: created.output)["id"]?.stringValue)
            }
            let billingID = try await create("billing", #"{"name": "Billing", "instructions": "You are the billing desk.", "filler_delay_ms": 0}"#)
            let triageID = try await create("triage", """
                {"name": "Triage", "instructions": "You are the front desk.", "filler_delay_ms": 0,
                 "handoffs": [{"agent_id": "\(billingID)", "description": "Questions about charges and invoices."}]}
                """)
            return Desk(server: server, work: work, triageID: triageID, billingID: billingID)
        }

        /// Runs the example against triage, with a JSON report.
        func evalExample() async -> CommandRun {
            let example = EvalExampleFilesTests.directory.appendingPathComponent("handoff.json").path
            return await CommandRun.run(
                ["eval", example, "--url", server.url, "--agent", triageID, "--json", "report.json"],
                environment: server.environment.merging(["PARLEY_TTS": "flite"]) { _, new in new }, directory: work.url
            )
        }

        /// The turns of the report's first run.
        func reportedTurns() throws -> [JSONValue] {
            let report = try JSONValue(parsing: String(contentsOfFile: work.path("report.json"), encoding: .utf8))
            guard case .array(let turns)? = report["files"]?.element(0)?["scenarios"]?.element(0)?["runs"]?.element(0)?["turns"] else { return [] }
            return turns
        }

        func stop() async {
            await server.stop()
            work.remove()
        }
    }

    @Test("triage transfers to billing, who answers in the same turn: handoff_to billing passes, by the agent's name")
    func realHandoffPasses() async throws {
        let model = ScriptedLanguageModel(replies: [])
        let desk = try await Desk.start(model)
        defer { Task { await desk.stop() } }
        let transfer = ToolCall(id: "call_handoff", name: "transfer_to_" + desk.billingID.lowercased(), arguments: "{}")
        model.append(contentsOf: [
            .toolCalls([transfer], text: "Let me pass you to billing."),
            .text("Billing here: I see the double charge and will refund it."),
            .text("Thank you, order A 17 is noted."),
        ])
        let run = await desk.evalExample()
        #expect(run.status == 0, "\(run.output)\(run.errorOutput)")
        #expect(run.output.hasSuffix("All scenario runs passed: 1/1 passed (100 %)\n"), "\(run.output)")
        let turns = try desk.reportedTurns()
        #expect(turns.first?["handoffs"] == .array([.string(desk.billingID)]))
        #expect(turns.first?["reply"] == .string("Let me pass you to billing. Billing here: I see the double charge and will refund it."))
        #expect(turns.first?["tool_calls"] == .array([]), "the transfer is the handoff, not a tool call")
        #expect(turns.last?["reply"] == .string("Thank you, order A 17 is noted."), "the second turn is billing's answer to it")
        // Billing's model was asked after the handoff, with billing's instructions.
        let requests = model.requests
        #expect(requests.count == 3)
        #expect(requests.dropFirst().first?.messages.first.map { "\($0)".contains("You are the billing desk.") } == true)
    }

    @Test("a model that does not transfer fails handoff_to with the reason, and exit 1")
    func noTransferFails() async throws {
        let desk = try await Desk.start(ScriptedLanguageModel(replies: [
            .text("I am sorry about that charge, let me look."), .text("Noted."),
        ]))
        defer { Task { await desk.stop() } }
        let run = await desk.evalExample()
        #expect(run.status == 1, "\(run.output)\(run.errorOutput)")
        #expect(run.output.contains("FAIL    handoff_to billing: no handoff: the agent answered the caller itself"), "\(run.output)")
        #expect(run.output.hasSuffix("Scenario runs: 0/1 passed (0 %)\n"), "\(run.output)")
        #expect(try desk.reportedTurns().first?["handoffs"] == .array([]))
    }
}
