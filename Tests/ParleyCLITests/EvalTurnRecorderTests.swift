import Foundation
import ParleyCore
import Testing
@testable import ParleyCLI

/// The caller's view of a turn, folded from scripted server events, and the expectations
/// checked against it; no sockets.
@Suite("parley eval turn recorder")
struct EvalTurnRecorderTests {
    private static let position = RealtimeContentPosition(responseID: "resp_1", itemID: "item_1")
    /// 100 ms of pcm16 at 24 kHz, as base64.
    private static let tenthOfASecond = PCM16Buffer(samples: Array(repeating: 1, count: 2_400)).base64EncodedString()

    private static func response(_ status: RealtimeResponseStatus) -> RealtimeResponse {
        RealtimeResponse(id: "resp_1", status: status)
    }

    @Test("a handoff turn: parley.handoff and session.updated as the handoff branch sends them, the new agent's tool and reply")
    func handoff() {
        let start = ContinuousClock.now
        var recorder = TurnRecorder()
        recorder.inputSent(at: start)
        let script: [(RealtimeServerEvent, Int, TurnRecorder.Step)] = [
            (.inputAudioTranscriptionCompleted(itemID: "item_0", contentIndex: 0, transcript: " I was charged twice ", usage: .duration(seconds: 1)), 300, .requestReply),
            (.parley(type: "parley.handoff", payload: .object(["from_agent": .string("triage"), "to_agent": .string("billing")])), 500, .listen),
            (.parley(type: "parley.tool_call.started", payload: .object([
                "name": .string("refund"), "arguments": .string(#"{"order":"A-17","amount":12.5}"#),
            ])), 600, .listen),
            (.responseOutputAudioTranscriptDelta(Self.position, delta: "Billing here: "), 700, .listen),
            (.responseOutputAudioDelta(Self.position, delta: Self.tenthOfASecond), 720, .replyStarted),
            (.responseOutputAudioDelta(Self.position, delta: Self.tenthOfASecond), 740, .listen),
            (.responseOutputAudioTranscriptDelta(Self.position, delta: "refunded."), 760, .listen),
            (.responseDone(Self.response(.completed)), 900, .finished),
        ]
        for (event, ms, step) in script {
            #expect(recorder.record(event, at: start + .milliseconds(ms)) == step)
        }
        let observed = recorder.observation
        #expect(observed.heard == "I was charged twice")
        #expect(observed.reply == "Billing here: refunded.")
        #expect(observed.handoffs == ["billing"])
        #expect(observed.replyStartedAfterMs == 720)
        #expect(observed.replyAudioMs == 200)
        let outcomes = [
            TurnExpectation.handoffTo("billing"), .toolCalled(name: "refund", argumentsContain: ["order": .string("a-17"), "amount": .number(12.5)]),
            .replyStartedWithin(milliseconds: 1000), .interrupted(false),
        ].map { ExpectationOutcome($0, observed) }
        #expect(outcomes.allSatisfy { $0.passed }, "\(outcomes)")
        #expect(ExpectationOutcome(.handoffTo("sales"), observed).reason == "handed off to billing instead")
        #expect(ExpectationOutcome(.replyStartedWithin(milliseconds: 500), observed).reason == "the reply started after 720 ms")
        #expect(ExpectationOutcome(.noToolCalled, observed).reason == "refund was called")
        #expect(ExpectationOutcome(.toolCalled(name: "refund", argumentsContain: ["amount": .number(10)]), observed).reason
            == #"refund was called with {"order":"A-17","amount":12.5}: amount is 12.5, not 10"#)
    }

    @Test("a handoff in the server's order: the transfer ends the first response, then the report, then the new agent's reply")
    func handoffInTwoResponses() {
        var recorder = TurnRecorder(typed: "I was charged twice")
        let transfer = RealtimeServerEvent.parley(type: "parley.tool_call.started", payload: .object([
            "name": .string("transfer_to_agent_billing"), "arguments": .string("{}"),
        ]))
        #expect(recorder.record(transfer, at: .now) == .listen)
        #expect(recorder.record(.responseOutputAudioTranscriptDelta(Self.position, delta: "Let me pass you."), at: .now) == .listen)
        #expect(recorder.record(.responseDone(Self.response(.completed)), at: .now) == .listen, "the handoff is still to be reported")
        #expect(recorder.record(.sessionUpdated(RealtimeSessionInfo(id: "sess_1", settings: RealtimeSessionSettings(instructions: "You are billing."))), at: .now) == .listen)
        #expect(recorder.record(.parley(type: "parley.handoff", payload: .object(["from_agent": .string("agent_triage"), "to_agent": .string("agent_billing")])), at: .now) == .listen)
        #expect(recorder.record(.responseOutputAudioTranscriptDelta(Self.position, delta: "Billing here."), at: .now) == .listen)
        #expect(recorder.record(.responseDone(Self.response(.completed)), at: .now) == .finished)
        var observed = recorder.observation
        #expect(observed.reply == "Let me pass you. Billing here.")
        #expect(observed.toolCalls.isEmpty, "the transfer is reported as the handoff")
        #expect(ExpectationOutcome(.noToolCalled, observed).passed)
        #expect(ExpectationOutcome(.handoffTo("agent_billing"), observed).passed)
        #expect(ExpectationOutcome(.handoffTo("billing"), observed).reason == "handed off to agent_billing instead")
        observed.handoffNames = ["agent_billing": "Billing"]
        #expect(ExpectationOutcome(.handoffTo("billing"), observed).passed, "an agent is also named by its name, ignoring case")
        #expect(ExpectationOutcome(.handoffTo("sales"), observed).reason == "handed off to Billing (agent_billing) instead")
    }

    @Test("a refused handoff ends the turn with the agent's own answer and says why the expectation failed")
    func refusedHandoff() {
        var recorder = TurnRecorder(typed: "I was charged twice")
        _ = recorder.record(.parley(type: "parley.tool_call.started", payload: .object(["name": .string("transfer_to_agent_billing")])), at: .now)
        _ = recorder.record(.responseOutputAudioTranscriptDelta(Self.position, delta: "I will help you myself."), at: .now)
        #expect(recorder.record(.responseDone(Self.response(.completed)), at: .now) == .listen)
        let refusal = RealtimeServerEvent.parley(type: "parley.handoff", payload: .object([
            "from_agent": .string("agent_triage"), "to_agent": .string("agent_billing"), "error": .string("the agent no longer exists"),
        ]))
        #expect(recorder.record(refusal, at: .now) == .finished)
        #expect(ExpectationOutcome(.handoffTo("agent_billing"), recorder.observation).reason
            == "the server refused the handoff to agent_billing: the agent no longer exists")
        #expect(ExpectationOutcome(.handoffTo("billing"), TurnRecorder(typed: "hi").observation).reason == "no handoff: the agent answered the caller itself")
    }

    @Test("an interruption the server honoured, and one it ignored")
    func interruption() {
        var honoured = TurnRecorder(typed: "tell me a story")
        _ = honoured.record(.responseOutputAudioDelta(Self.position, delta: Self.tenthOfASecond), at: .now)
        honoured.interrupted()
        #expect(honoured.record(.error(RealtimeProtocolError(code: "response_cancel_not_active", message: "no response", eventID: TurnRecorder.cancelEventID)), at: .now) == .listen)
        #expect(honoured.record(.responseDone(Self.response(.completed)), at: .now) == .listen, "the truncation is still to be answered")
        #expect(honoured.record(.conversationItemTruncated(itemID: "item_1", contentIndex: 0, audioEndMs: 100), at: .now) == .finished)
        #expect(honoured.observation.failure == nil)
        #expect(honoured.observation.wasInterrupted)
        #expect(ExpectationOutcome(.interrupted(true), honoured.observation).passed)
        #expect(ExpectationOutcome(.interrupted(false), honoured.observation).reason == "the reply was cut after 100 ms")

        var ignored = TurnRecorder(typed: "tell me a story")
        _ = ignored.record(.responseOutputAudioDelta(Self.position, delta: Self.tenthOfASecond), at: .now)
        ignored.interrupted()
        _ = ignored.record(.responseDone(Self.response(.completed)), at: .now)
        #expect(ExpectationOutcome(.interrupted(true), ignored.observation).reason
            == "the caller interrupted after 100 ms of the reply, but the server let it end (completed)")

        let finishedFirst = TurnRecorder(typed: "hi").observation
        #expect(ExpectationOutcome(.interrupted(true), finishedFirst).reason == "the reply ended before the interruption")
    }

    @Test("speech over the reply under server turn detection: the turn waits for the moment and the verdict, then follows it")
    func speechOverTheReply() {
        let verdict = { (interrupts: Bool, reason: String) in
            RealtimeServerEvent.parley(type: "parley.interruption", payload: .object([
                "interrupts": .bool(interrupts), "reason": .string(reason), "words": .string("Okay."),
            ]))
        }
        var kept = TurnRecorder(typed: "tell me a story")
        kept.willSpeakOver()
        _ = kept.record(.responseOutputAudioDelta(Self.position, delta: Self.tenthOfASecond), at: .now)
        #expect(kept.record(.responseDone(Self.response(.completed)), at: .now) == .listen, "the backchannel is still to be said")
        kept.spokeOver()
        #expect(kept.record(.parley(type: "parley.output_audio.paused", payload: .object([:])), at: .now) == .listen)
        #expect(kept.record(verdict(false, "backchannel"), at: .now) == .finished)
        #expect(kept.observation.interruptionVerdict == .init(interrupts: false, reason: "backchannel", words: "Okay."))
        #expect(ExpectationOutcome(.interrupted(false), kept.observation).passed)

        var cut = TurnRecorder(typed: "tell me a story")
        cut.willSpeakOver()
        _ = cut.record(.responseOutputAudioDelta(Self.position, delta: Self.tenthOfASecond), at: .now)
        cut.spokeOver()
        #expect(cut.record(verdict(true, "words"), at: .now) == .listen, "the reply is not done yet")
        #expect(cut.record(.inputAudioTranscriptionCompleted(itemID: "item_2", contentIndex: 0, transcript: " stop ", usage: .duration(seconds: 1)), at: .now) == .listen)
        #expect(cut.record(.responseDone(Self.response(.completed)), at: .now) == .finished)
        #expect(cut.observation.heard == "tell me a story", "the words over the reply are the next turn's")
        #expect(cut.observation.heardOverReply == "stop")
        #expect(ExpectationOutcome(.interrupted(true), cut.observation).passed)
        #expect(ExpectationOutcome(.interrupted(false), cut.observation).reason == "the reply was cut after 100 ms")

        var missed = TurnRecorder(typed: "hi")
        missed.willSpeakOver()
        #expect(missed.record(.responseDone(Self.response(.completed)), at: .now) == .listen)
        #expect(missed.replyPlayedOut(by: .now))
        #expect(missed.speechOverMissed() == .finished)
    }

    @Test("a caller turn split by a pause under server turn detection: the reply the rest of it cut is not the turn's reply")
    func splitTurn() {
        var recorder = TurnRecorder()
        #expect(recorder.record(.inputAudioTranscriptionCompleted(itemID: "item_1", contentIndex: 0, transcript: "Wait, stop.", usage: .duration(seconds: 1)), at: .now) == .requestReply)
        _ = recorder.record(.responseOutputAudioTranscriptDelta(Self.position, delta: "Sure"), at: .now)
        _ = recorder.record(.responseOutputAudioDelta(Self.position, delta: Self.tenthOfASecond), at: .now)
        var cut = Self.response(.cancelled)
        cut.statusDetails = RealtimeResponseStatusDetails(reason: .turnDetected)
        #expect(recorder.record(.responseDone(cut), at: .now) == .listen)
        #expect(recorder.record(.inputAudioTranscriptionCompleted(itemID: "item_2", contentIndex: 0, transcript: "Tell me more.", usage: .duration(seconds: 1)), at: .now) == .requestReply)
        _ = recorder.record(.responseOutputAudioTranscriptDelta(Self.position, delta: "Here is more."), at: .now)
        #expect(recorder.record(.responseOutputAudioDelta(Self.position, delta: Self.tenthOfASecond), at: .now) == .replyStarted)
        #expect(recorder.record(.responseDone(Self.response(.completed)), at: .now) == .finished)
        #expect(recorder.observation.heard == "Wait, stop. Tell me more.")
        #expect(recorder.observation.reply == "Here is more.")
        #expect(recorder.observation.replyAudioMs == 100)
        #expect(recorder.observation.responseStatus == "completed")
    }

    @Test("a refused turn and a failed reply end the turn with the server's reason")
    func failures() {
        var refused = TurnRecorder()
        #expect(refused.record(.error(RealtimeProtocolError(type: "invalid_request_error", code: "input_audio_buffer_commit_empty", message: "buffer too small")), at: .now) == .finished)
        #expect(refused.observation.failure == "the server refused the caller's turn: buffer too small")

        var failed = TurnRecorder(typed: "hi")
        #expect(failed.record(.error(RealtimeProtocolError(type: "server_error", code: "upstream", message: "the model is down")), at: .now) == .listen)
        #expect(failed.record(.responseDone(Self.response(.failed)), at: .now) == .finished)
        #expect(failed.observation.failure == "the reply failed: the model is down")
    }

    @Test("keys pressed in a row: the replies to the earlier keys (cut or done) are passed over, the last key's is the turn's")
    func keyPressesPassOverEarlierReplies() {
        let start = ContinuousClock.now
        var recorder = TurnRecorder(typed: "pressed 12#", repliesToPassOver: 2)
        func position(_ response: String) -> RealtimeContentPosition { RealtimeContentPosition(responseID: response, itemID: "item_\(response)") }
        let script: [(RealtimeServerEvent, TurnRecorder.Step)] = [
            (.responseCreated(RealtimeResponse(id: "resp_1", status: .inProgress)), .listen),
            (.responseOutputAudioTranscriptDelta(position("resp_1"), delta: "You pressed one."), .listen),
            (.responseOutputAudioDelta(position("resp_1"), delta: Self.tenthOfASecond), .listen),
            (.responseDone(RealtimeResponse(id: "resp_1", status: .completed)), .listen),
            (.responseCreated(RealtimeResponse(id: "resp_2", status: .inProgress)), .listen),
            (.responseOutputAudioTranscriptDelta(position("resp_2"), delta: "You pressed"), .listen),
            (.responseDone(RealtimeResponse(id: "resp_2", status: .cancelled)), .listen),
            (.responseCreated(RealtimeResponse(id: "resp_3", status: .inProgress)), .listen),
            (.responseOutputAudioTranscriptDelta(position("resp_3"), delta: "Thank you."), .listen),
            (.responseOutputAudioDelta(position("resp_3"), delta: Self.tenthOfASecond), .replyStarted),
            (.responseDone(RealtimeResponse(id: "resp_3", status: .completed)), .finished),
        ]
        recorder.inputSent(at: start)
        for (index, (event, step)) in script.enumerated() {
            #expect(recorder.record(event, at: start + .milliseconds(10 * index)) == step, "event \(index)")
        }
        let observed = recorder.observation
        #expect(observed.heard == "pressed 12#")
        #expect(observed.reply == "Thank you.")
        #expect(observed.replyAudioMs == 100)
        #expect(observed.replyStartedAfterMs == 90)
        #expect(observed.responseStatus == "completed")
    }

    @Test("a key press the server refuses ends the turn with its reason")
    func refusedKeyPress() {
        var recorder = TurnRecorder(typed: "pressed 5")
        let refusal = RealtimeProtocolError(
            code: "key_presses_off", message: "Set the agent's telephony.key_press_messages.", param: "key", eventID: TurnRecorder.keyPressEventID
        )
        #expect(recorder.record(.error(refusal), at: .now) == .finished)
        #expect(recorder.observation.failure == "the server refused the key press: Set the agent's telephony.key_press_messages.")
    }

    @Test("the judge's answer is read from the first JSON object in it")
    func judgeVerdict() {
        #expect(ConversationJudge.verdict(in: #"Sure. {"score": 8, "reason": "booked"} "#)! == (8, "booked"))
        #expect(ConversationJudge.verdict(in: #"{"score": 12}"#) == nil)
        #expect(ConversationJudge.verdict(in: "eight") == nil)
    }
}
