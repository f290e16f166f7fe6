import Foundation
import ParleyCore
import ParleyServer
import ParleyTesting
import Testing

/// A handoff on a WebRTC call: aiortc (PyPI) calls triage's instance over
/// `POST /v1/realtime/calls` and types a billing question on the `oai-events` data channel;
/// triage's scripted model transfers, and billing answers on the same call with its own tool and
/// voice.
@Suite(.serialized) struct WebRTCHandoffTests {
    @Test func triageHandsToBillingOnAWebRTCCallAndBillingsToolRuns() async throws {
        let stage = try AgentHandoffTests.Stage(replies: [])
        defer { Task { await stage.server.stop() } }
        let (triage, billing) = try await stage.triageAndBilling()
        stage.model.append(contentsOf: AgentHandoffTests.handoffToBillingWhoUsesItsCalculator(billing))
        let instance = try await stage.server.request("POST", "/v1/agents/\(triage)/instances", json: #"{"user":"caller-1"}"#)
        let instanceID = try #require(instance.body["id"]?.stringValue)
        let token = try #require(instance.body["client_secret"]?["value"]?.stringValue)

        let result = try await ChildProcess.run(ChildProcess.python, [
            WebRTCCallTests.harness.path,
            "--url", "http://127.0.0.1:\(stage.server.port)/v1/realtime/calls?instance=\(instanceID)&parley_events=true",
            "--token", token, "--secret", stage.server.secret, "--question", "unused.wav", "--answer-out", "unused.wav",
            "typed_handoff",
        ], deadline: .seconds(200))
        #expect(result.output.contains("ok typed_handoff\n"), "\(result.output)")
        #expect(result.output.contains("handoff: \(triage) -> \(billing)\n"), "\(result.output)")
        let tools = result.output.components(separatedBy: "\n").first { $0.hasPrefix("tools: ") } ?? ""
        #expect(tools.hasSuffix("calculate"), "billing's calculator ran on the call: \(tools)")
        #expect(result.output.contains("answer: Your balance is 42 dollars.\n"), "\(result.output)")

        // Billing's tool was offered only after the handoff, and billing read its result.
        let requests = stage.model.requests
        try #require(requests.count == 3, "\(requests.count) model requests")
        #expect(!AgentHandoffTests.toolNames(requests[0]).contains("calculate"), "triage has no calculator")
        #expect(AgentHandoffTests.toolNames(requests[1]).contains("calculate"))
        #expect(requests[2].messages.contains { if case .tool("call_calc", let content) = $0 { content.contains("42") } else { false } })
        #expect(stage.voices["Your balance is 42 dollars."] == "billing-voice", "\(stage.voices)")
        #expect(stage.voices["Let me pass you to billing."] == "triage-voice", "\(stage.voices)")
    }
}
