import Foundation
import ParleyCore
import ParleyServer
import ParleyTesting
import Testing

// In `SIPCallTests`, whose baresip calls run one at a time.
extension SIPCallTests {
    @Test func aSIPCallerOfTriageIsAnsweredByBillingWithItsToolAndThePhoneTools() async throws {
        let model = ScriptedLanguageModel(replies: [])
        let parley = try SIPTestServer.start(languageModel: model)
        let billing = try #require(try await parley.server.request(
            "POST", "/v1/agents", json: #"{"name":"Billing","voice":"billing-voice","tools":[{"type":"builtin","name":"calculate"}]}"#
        ).body["id"]?.stringValue)
        let triage = try await parley.server.request("POST", "/v1/agents", json: #"""
            {"name":"Triage","telephony":{"phone_numbers":["+14155550123"]},"handoffs":[{"agent_id":"\#(billing)","description":"Billing questions."}]}
            """#)
        let triageID = try #require(triage.body["id"]?.stringValue, "\(triage.body)")
        model.append(contentsOf: [
            .toolCalls([ToolCall(id: "call_handoff", name: "transfer_to_" + billing.lowercased(), arguments: "{}")], text: "Let me pass you to billing."),
            .toolCalls([ToolCall(id: "call_calc", name: "calculate", arguments: #"{"expression":"40+2"}"#)]),
            .text("Your balance is 42 dollars."),
        ])
        let caller = try BaresipPhone(microphone: TelephoneAudio.question() + TelephoneAudio.lineNoise(milliseconds: 8_000, seed: 5))
        defer { caller.remove() }
        // baresip hangs up once both agents' replies have played.
        let output = try await caller.call("sip:+14155550123@127.0.0.1:\(parley.sipPort)") {
            parley.logs.lines(of: "sip.reply_played").count >= 2
        }
        let requests = model.requests
        try #require(requests.count == 3, "\(output)")
        #expect(!Set(requests[0].tools.map(\.name)).contains("calculate"))
        #expect(Set(requests[1].tools.map(\.name)).isSuperset(of: ["calculate", "end_call", "send_dtmf", "transfer_call"]))
        let started = try #require(await parley.logs.first("sip.call_started"))
        let conversationID = try #require(started["conversation"]?.stringValue)
        _ = await parley.logs.first("sip.call_ended")
        let items = try await parley.server.app.context.store.items(conversationID: conversationID)
        #expect(items.contains { $0.message == .assistant(text: "Your balance is 42 dollars.") && $0.agentID == billing }, "\(items)")
        #expect(items.contains { $0.message == .assistant(text: "Let me pass you to billing.") && $0.agentID == triageID }, "\(items)")
        await parley.stop()
    }
}
