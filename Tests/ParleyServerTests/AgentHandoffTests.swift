import Foundation
import ParleyCore
import ParleyNet
import ParleyServer
import ParleyStore
import ParleyTesting
import Testing

/// Handoffs between agents, end to end: a real server on port 0 with a scripted language model
/// and a scripted synthesizer that remembers the voice of each line, driven by a real WebSocket
/// client and a simulated Twilio call; what is stored is read back over REST.
@Suite struct AgentHandoffTests {
    /// A server whose model plays `replies` and whose synthesizer records the voice of each line.
    struct Stage {
        let server: TestServer
        let model: ScriptedLanguageModel
        let synthesizer: ScriptedSpeechSynthesizer

        init(replies: [ScriptedLanguageModel.Reply], log: EventLog = .silent, configure: (inout ServerSettings) -> Void = { _ in }) throws {
            model = ScriptedLanguageModel(replies: replies)
            synthesizer = ScriptedSpeechSynthesizer(millisecondsPerWord: 20)
            var providers = TestServer.testProviders()
            providers.languageModel = model
            providers.synthesizer = synthesizer
            server = try TestServer.start(providers: providers, log: log, configure: configure)
        }

        /// Creates an agent from its JSON definition; returns its id.
        func agent(_ json: String) async throws -> String {
            let created = try await server.request("POST", "/v1/agents", json: json)
            #expect(created.status == 201, "\(created.body)")
            return try #require(created.body["id"]?.stringValue)
        }

        /// Billing (with the calculator, its own voice) and triage, which may hand off to billing.
        func triageAndBilling(history: String = "whole") async throws -> (triage: String, billing: String) {
            let billing = try await agent(
                #"{"name":"Billing","instructions":"You are the billing desk.","voice":"billing-voice","tools":[{"type":"builtin","name":"calculate"}]}"#
            )
            let triage = try await agent(#"""
                {"name":"Triage","instructions":"You are the front desk.","voice":"triage-voice","handoff_history":"\#(history)",
                 "handoffs":[{"agent_id":"\#(billing)","description":"Questions about invoices and payments."}]}
                """#)
            return (triage, billing)
        }

        /// The voice each spoken line was asked for, by its text.
        var voices: [String: String?] {
            Dictionary(zip(synthesizer.texts, synthesizer.options.map(\.voice)), uniquingKeysWith: { first, _ in first })
        }
    }

    static func transfer(to agentID: String, id: String) -> ToolCall {
        ToolCall(id: id, name: "transfer_to_" + agentID.lowercased(), arguments: "{}")
    }

    /// The scripted turn of the handoff tests: triage transfers to `billing`, billing runs its
    /// calculator and says the balance.
    static func handoffToBillingWhoUsesItsCalculator(_ billing: String) -> [ScriptedLanguageModel.Reply] {
        [
            .toolCalls([transfer(to: billing, id: "call_handoff")], text: "Let me pass you to billing."),
            .toolCalls([ToolCall(id: "call_calc", name: "calculate", arguments: #"{"expression":"40+2"}"#)]),
            .text("Your balance is 42 dollars."),
        ]
    }

    static func say(_ text: String, on client: RealtimeTestClient) throws {
        try client.send(#"{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"\#(text)"}]}}"#)
        try client.send(#"{"type":"response.create"}"#)
    }

    static func toolNames(_ request: ChatRequest) -> Set<String> { Set(request.tools.map(\.name)) }

    @Test func triageHandsToBillingWhoseToolAndVoiceAnswerInTheSameTurn() async throws {
        let stage = try Stage(replies: [])
        let (triage, billing) = try await stage.triageAndBilling()
        stage.model.append(contentsOf: Self.handoffToBillingWhoUsesItsCalculator(billing))
        let instance = try await stage.server.request("POST", "/v1/agents/\(triage)/instances", json: #"{"user":"caller-1"}"#)
        let instanceID = try #require(instance.body["id"]?.stringValue)
        let conversationID = try #require(instance.body["conversation_id"]?.stringValue)
        let token = try #require(instance.body["client_secret"]?["value"]?.stringValue)
        let client = try await RealtimeTestClient.connect(stage.server, token: token, query: "?instance=\(instanceID)&parley_events=true")
        #expect(await client.next("session.created")?["session"]?["instructions"]?.stringValue == "You are the front desk.")
        try Self.say("I have a question about my invoice.", on: client)

        // Triage's response ends; the session takes billing's settings, and says why.
        #expect(await client.next("response.done") != nil)
        let updated = try #require(await client.next("session.updated"))
        #expect(updated["session"]?["instructions"]?.stringValue == "You are the billing desk.")
        #expect(updated["session"]?["audio"]?["output"]?["voice"]?.stringValue == "billing-voice", "\(updated)")
        let handoff = try #require(await client.next("parley.handoff"))
        #expect(handoff["from_agent"]?.stringValue == triage)
        #expect(handoff["to_agent"]?.stringValue == billing)
        #expect(handoff["reason"]?.stringValue == "Questions about invoices and payments.")
        #expect(handoff["error"] == nil)
        // Billing answers without the caller speaking again: a second response in the one turn.
        let second = try #require(await client.next("response.done"))
        #expect(second["response"]?["status"]?.stringValue == "completed", "\(second)")

        let requests = stage.model.requests
        try #require(requests.count == 3)
        #expect(Self.toolNames(requests[0]).contains("transfer_to_" + billing.lowercased()))
        #expect(!Self.toolNames(requests[0]).contains("calculate"), "triage has no calculator")
        #expect(Self.toolNames(requests[1]).contains("calculate"), "billing's tool is offered after the handoff")
        #expect(requests[1].messages.first.map { "\($0)".contains("You are the billing desk.") } == true)
        // The transfer's result keeps the history well-formed for billing.
        #expect(requests[1].messages.contains { if case .tool("call_handoff", let content) = $0 { content.contains("Handed off to Billing") } else { false } })
        #expect(requests[2].messages.contains { if case .tool("call_calc", let content) = $0 { content.contains("42") } else { false } }, "\(requests[2].messages)")

        // Each agent spoke with its own voice.
        #expect(stage.voices["Let me pass you to billing."] == "triage-voice", "\(stage.voices)")
        #expect(stage.voices["Your balance is 42 dollars."] == "billing-voice", "\(stage.voices)")

        // The conversation read back holds both agents' turns, each marked with its agent.
        let items = try await stage.server.request("GET", "/v1/conversations/\(conversationID)/items")
        guard case .array(let list)? = items.body["data"] else { Issue.record("no items: \(items.body)"); return }
        func agent(ofAssistantText text: String) -> String? {
            list.first { $0["role"]?.stringValue == "assistant" && $0["text"]?.stringValue == text }?["agent_id"]?.stringValue
        }
        #expect(agent(ofAssistantText: "Let me pass you to billing.") == triage, "\(list)")
        #expect(agent(ofAssistantText: "Your balance is 42 dollars.") == billing, "\(list)")
        #expect(list.first { $0["role"]?.stringValue == "user" }?["agent_id"]?.stringValue == triage)

        // The instance is billing's now (recorded beside the session's items); it was triage's.
        let server = stage.server
        #expect(await ResourceProbe.eventually(within: 10) {
            (try? await server.request("GET", "/v1/instances/\(instanceID)"))?.body["agent_id"]?.stringValue == billing
        })
        let read = try await stage.server.request("GET", "/v1/instances/\(instanceID)")
        #expect(read.body["original_agent_id"]?.stringValue == triage, "\(read.body)")
        // Joining the instance again, the caller is still with billing.
        client.socket.close(code: 1000, reason: "done")
        #expect(await client.closes(within: 10))
        stage.model.append(contentsOf: [.text("Billing again.")])
        let again = try await RealtimeTestClient.connect(stage.server, token: token, query: "?instance=\(instanceID)")
        #expect(await again.next("session.created")?["session"]?["instructions"]?.stringValue == "You are the billing desk.")
        try Self.say("Me again.", on: again)
        #expect(await again.next("response.done")?["response"]?["status"]?.stringValue == "completed")
        #expect(stage.model.requests.last.map { Self.toolNames($0).contains("calculate") } == true)
        #expect(stage.voices["Billing again."] == "billing-voice")
        await stage.server.stop()
    }

    @Test func theRecordingFollowsTheSessionAndHoldsBothAgentsVoices() async throws {
        let stage = try Stage(replies: [])
        let billing = try await stage.agent(#"{"name":"Billing","voice":"billing-voice"}"#)
        let triage = try await stage.agent(#"{"name":"Triage","recordings":true,"handoffs":[{"agent_id":"\#(billing)"}]}"#)
        let billingLine = "Your balance is 42 dollars and nothing more is due this month."
        stage.model.append(contentsOf: [.toolCalls([Self.transfer(to: billing, id: "call_1")], text: "Let me pass you to billing."), .text(billingLine)])
        let client = try await RealtimeTestClient.connect(stage.server, query: "?agent=\(triage)")
        let conversationID = try #require(await client.next("conversation.created")?["conversation"]?["id"]?.stringValue)
        try Self.say("Invoice, please.", on: client)
        #expect(await client.next("response.done") != nil)
        #expect(await client.next("response.done") != nil)
        client.socket.close(code: 1000, reason: "done")
        await stage.server.app.context.recordings.waitUntilWritten(conversationID: conversationID)
        let (_, agentChannel) = RecordingTests.channels(try await RecordingTests.download(stage.server, conversationID: conversationID))
        // Triage's 6 words and billing's 12, 20 ms each of a 440 Hz tone: well over triage's alone.
        let loud = RecordingTests.loudFrames(agentChannel, from: 0, to: agentChannel.count * 1000 / RecordingTests.rate)
        #expect(loud > 18 * 20 * RecordingTests.rate / 1000 / 2, "loud agent samples: \(loud)")
        #expect(stage.synthesizer.options.contains { $0.voice == "billing-voice" }, "\(stage.voices)")
        await stage.server.stop()
    }

    @Test func tracesNameTheAgentOfEachTurnAndShowTheHandoff() async throws {
        let collector = try TraceCollector()
        var tracing = OTLPConfiguration(endpoint: collector.endpoint)
        tracing.scheduleDelay = .milliseconds(50)
        let stage = try Stage(replies: []) { $0.tracing = tracing }
        let (triage, billing) = try await stage.triageAndBilling()
        stage.model.append(contentsOf: [.toolCalls([Self.transfer(to: billing, id: "call_1")]), .text("Billing here.")])
        let client = try await RealtimeTestClient.connect(stage.server, query: "?agent=\(triage)")
        try Self.say("Invoice, please.", on: client)
        #expect(await client.next("response.done") != nil)
        #expect(await client.next("response.done") != nil)
        func roots() async -> [JSONValue] { await collector.spans.filter { $0["name"]?.stringValue == "parley.turn" } }
        try #require(await ResourceProbe.eventually(within: 30) { await roots().count == 2 })
        let agents = await roots().map { TraceExportTests.attribute("gen_ai.agent.id", of: $0)?["stringValue"]?.stringValue }
        #expect(Set(agents.compactMap { $0 }) == [triage, billing], "\(agents)")
        let billingTurn = try #require(await roots().first { TraceExportTests.attribute("gen_ai.agent.id", of: $0)?["stringValue"]?.stringValue == billing })
        let handoff = try #require(await collector.spans.first { $0["name"]?.stringValue == "parley.handoff" })
        #expect(handoff["traceId"] == billingTurn["traceId"] && handoff["parentSpanId"] == billingTurn["spanId"])
        #expect(TraceExportTests.attribute("parley.handoff.from_agent", of: handoff)?["stringValue"]?.stringValue == triage)
        #expect(TraceExportTests.attribute("parley.handoff.to_agent", of: handoff)?["stringValue"]?.stringValue == billing)
        await stage.server.stop()
        await collector.stop()
    }

    @Test func parleyHandoffIsSentOnlyToClientsThatAskForIt() async throws {
        let stage = try Stage(replies: [])
        let (triage, billing) = try await stage.triageAndBilling()
        stage.model.append(contentsOf: [.toolCalls([Self.transfer(to: billing, id: "call_1")]), .text("Billing here.")])
        let client = try await RealtimeTestClient.connect(stage.server, query: "?agent=\(triage)")
        try Self.say("Invoice, please.", on: client)
        #expect(await client.next("response.done") != nil)
        #expect(await client.next("session.updated")?["session"]?["instructions"]?.stringValue == "You are the billing desk.")
        #expect(await client.next("response.done") != nil)
        #expect(await client.events.allSatisfy { $0["type"]?.stringValue != "parley.handoff" })
        #expect(stage.voices["Billing here."] == "billing-voice")
        await stage.server.stop()
    }

    @Test func aLoopOfHandoffsIsStoppedAndReportedAndTheSessionGoesOn() async throws {
        let stage = try Stage(replies: [])
        let first = try await stage.agent(#"{"name":"A","instructions":"You are A."}"#)
        let second = try await stage.agent(#"{"name":"B","instructions":"You are B.","handoffs":[{"agent_id":"\#(first)"}]}"#)
        let patched = try await stage.server.request("PATCH", "/v1/agents/\(first)", json: #"{"handoffs":[{"agent_id":"\#(second)"}]}"#)
        #expect(patched.status == 200, "\(patched.body)")
        stage.model.append(contentsOf: [
            .toolCalls([Self.transfer(to: second, id: "call_1")]),
            .toolCalls([Self.transfer(to: first, id: "call_2")]),
            .toolCalls([Self.transfer(to: second, id: "call_3")]),
            .toolCalls([Self.transfer(to: first, id: "call_4")]),
            .text("I will help you myself."),
            .text("Still here."),
        ])
        let client = try await RealtimeTestClient.connect(stage.server, query: "?agent=\(first)&parley_events=true")
        try Self.say("Ping pong.", on: client)
        for expected in [(first, second), (second, first), (first, second)] {
            let handoff = try #require(await client.next("parley.handoff"))
            #expect(handoff["from_agent"]?.stringValue == expected.0 && handoff["to_agent"]?.stringValue == expected.1, "\(handoff)")
            #expect(handoff["error"] == nil)
        }
        let refused = try #require(await client.next("parley.handoff"))
        #expect(refused["from_agent"]?.stringValue == second && refused["to_agent"]?.stringValue == first)
        #expect(refused["error"]?.stringValue?.contains("3 handoffs") == true, "\(refused)")
        // The model was told, and B answered itself.
        let requests = stage.model.requests
        try #require(requests.count == 5)
        #expect(requests[4].messages.contains { if case .tool("call_4", let content) = $0 { content.contains("Not handed off") } else { false } })
        #expect(await client.next("response.done")?["response"]?["status"]?.stringValue == "completed")
        #expect(stage.synthesizer.texts.contains("I will help you myself."))
        // The next turn may hand off again, and the session answers as B.
        try Self.say("Are you there?", on: client)
        let done = try #require(await client.next("response.done"))
        #expect(done["response"]?["status"]?.stringValue == "completed")
        #expect(stage.model.requests.last?.messages.first.map { "\($0)".contains("You are B.") } == true)
        #expect(stage.server.app.context.metrics.prometheusText().contains(#"parley_handoffs_total{outcome="refused"} 1"#))
        await stage.server.stop()
    }

    @Test func aSummaryHandoffGivesTheTargetTheSummaryInsteadOfTheHistory() async throws {
        let stage = try Stage(replies: [])
        let (triage, billing) = try await stage.triageAndBilling(history: "summary")
        stage.model.append(contentsOf: [
            .toolCalls([Self.transfer(to: billing, id: "call_1")]),
            .text("The caller, Ada, asks whether invoice 17 is paid."),
            .text("Invoice 17 is paid, Ada."),
        ])
        let client = try await RealtimeTestClient.connect(stage.server, query: "?agent=\(triage)")
        try Self.say("Hi, I am Ada, is my invoice 17 paid?", on: client)
        #expect(await client.next("response.done") != nil)
        let answer = try #require(await client.next("response.done"))
        #expect(answer["response"]?["status"]?.stringValue == "completed")
        let requests = stage.model.requests
        try #require(requests.count == 3)
        // The summary was asked of the model with the conversation as a transcript.
        #expect(requests[1].tools.isEmpty)
        #expect(requests[1].messages.contains { if case .user = $0 { "\($0)".contains("I am Ada") } else { false } })
        // Billing reads its instructions and the summary, not the caller's words.
        let billingMessages = requests[2].messages
        #expect(billingMessages.contains { if case .system(let text) = $0 { text.contains("whether invoice 17 is paid") } else { false } }, "\(billingMessages)")
        #expect(!billingMessages.contains { if case .user = $0 { true } else { false } }, "\(billingMessages)")
        #expect(!billingMessages.contains { "\($0)".contains("I am Ada") })
        await stage.server.stop()
    }

    @Test func handoffsAreCheckedWhenAnAgentIsCreatedOrChanged() async throws {
        let stage = try Stage(replies: [])
        let billing = try await stage.agent(#"{"name":"Billing"}"#)
        let refusals: [(String, String)] = [
            (#"{"handoffs":[{"agent_id":"agent_missing"}]}"#, #"handoffs[0].agent_id: no agent "agent_missing""#),
            (#"{"handoffs":[{"agent_id":"\#(billing)"},{"agent_id":"\#(billing)"}]}"#, "handoffs[1].agent_id:"),
            (#"{"handoffs":[{"agent_id":""}]}"#, "handoffs[0].agent_id: must be 1 to 200 characters"),
            (#"{"handoffs":"billing"}"#, "handoffs"),
            (#"{"handoffs":[{"description":"no id"}]}"#, "agent_id"),
            (#"{"handoff_history":"partial"}"#, "handoff_history"),
        ]
        for (json, problem) in refusals {
            let response = try await stage.server.request("POST", "/v1/agents", json: json)
            #expect(response.status == 400, "\(json): \(response.body)")
            #expect(response.body["error"]?["message"]?.stringValue?.contains(problem) == true, "\(json): \(response.body)")
        }
        let selfHandoff = try await stage.server.request("PATCH", "/v1/agents/\(billing)", json: #"{"handoffs":[{"agent_id":"\#(billing)"}]}"#)
        #expect(selfHandoff.status == 400)
        #expect(selfHandoff.body["error"]?["message"]?.stringValue?.contains("cannot hand off to itself") == true, "\(selfHandoff.body)")
        #expect(try await stage.server.request("GET", "/v1/agents/\(billing)").body["handoffs"] == nil, "a refused change is not stored")
        await stage.server.stop()
    }

    @Test func aTargetDeletedSinceIsRefusedWhenTheHandoffIsTried() async throws {
        let stage = try Stage(replies: [])
        let (triage, billing) = try await stage.triageAndBilling()
        #expect(try await stage.server.request("DELETE", "/v1/agents/\(billing)").status == 200)
        stage.model.append(contentsOf: [.toolCalls([Self.transfer(to: billing, id: "call_1")]), .text("Billing is closed; I can help.")])
        let client = try await RealtimeTestClient.connect(stage.server, query: "?agent=\(triage)&parley_events=true")
        try Self.say("Billing please.", on: client)
        let refused = try #require(await client.next("parley.handoff"))
        #expect(refused["error"]?.stringValue?.contains("no agent \(billing)") == true, "\(refused)")
        #expect(await client.next("response.done")?["response"]?["status"]?.stringValue == "completed")
        #expect(stage.synthesizer.options.allSatisfy { $0.voice == "triage-voice" })
        await stage.server.stop()
    }

    @Test func onAPhoneCallBillingTakesOverWithItsToolAndVoiceAndThePhoneTools() async throws {
        let logs = TwilioCallTests.LogLines()
        let stage = try Stage(replies: [], log: logs.log)
        let (triage, billing) = try await stage.triageAndBilling()
        stage.model.append(contentsOf: Self.handoffToBillingWhoUsesItsCalculator(billing))
        let call = try await TwilioCallTests.placeCall(stage.server, query: "?agent=\(triage)")
        try call.sendAudio(TelephoneAudio.question())
        #expect(await ResourceProbe.eventually(within: 30) { stage.synthesizer.texts.contains("Your balance is 42 dollars.") })
        let requests = stage.model.requests
        try #require(requests.count == 3)
        #expect(!Self.toolNames(requests[0]).contains("calculate"))
        #expect(Self.toolNames(requests[1]).isSuperset(of: ["calculate", "end_call", "transfer_call"]), "\(Self.toolNames(requests[1]))")
        #expect(stage.voices["Let me pass you to billing."] == "triage-voice")
        #expect(stage.voices["Your balance is 42 dollars."] == "billing-voice")
        // Billing's answer is stored once it has been sent; then the caller hangs up.
        let conversationID = try #require(logs.conversation(ofCall: call.callSID))
        let store = stage.server.app.context.store
        #expect(await ResourceProbe.eventually(within: 30) {
            (try? await store.items(conversationID: conversationID))?.contains { $0.message == .assistant(text: "Your balance is 42 dollars.") } == true
        })
        try call.hangUp()
        #expect(await call.closes())
        let items = try await store.items(conversationID: conversationID)
        #expect(items.contains { $0.message == .assistant(text: "Your balance is 42 dollars.") && $0.agentID == billing }, "\(items)")
        #expect(items.contains { $0.message == .assistant(text: "Let me pass you to billing.") && $0.agentID == triage }, "\(items)")
        await stage.server.stop()
    }
}
