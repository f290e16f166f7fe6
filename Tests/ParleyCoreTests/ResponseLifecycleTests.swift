import Testing
@testable import ParleyCore

/// A response's life from start to end, as the session's response lifecycle decides it: the
/// runner's events in, the session's actions out, no providers, no tasks.
@Suite struct ResponseLifecycleTests {
    private static let trigger: Duration = .seconds(10)
    /// One second of output audio at 24 kHz.
    private static let second = [Int16](repeating: 0, count: 24_000)

    /// What an action is, as text: `emit <event kind>`, `play`, `cut <ms>` or `idle <ms>`.
    private static func describe(_ actions: [ResponseLifecycle.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .emit(let event): "emit \(EventKind(event))"
            case .play: "play"
            case .cutRecording(_, let milliseconds): "cut \(milliseconds)"
            case .armIdleTimeout(let audioEndMs): "idle \(audioEndMs)"
            }
        }
    }

    /// A lifecycle with response `resp_1` begun after one user item.
    private static func started(request: ResponseRequest = ResponseRequest()) -> (ResponseLifecycle, ConversationLedger) {
        var responses = ResponseLifecycle(outputSampleRate: 24_000)
        var ledger = ConversationLedger(items: [])
        ledger.upsert(id: "item_user", message: .user("What time is it?"))
        let response = responses.makeResponse(
            id: "resp_1", request: request, trigger: trigger, transcriptionMs: 120, recognizedSeconds: 1, speaks: true
        )
        #expect(describe(responses.begin(response, request: request)) == ["emit responseStarted"])
        return (responses, ledger)
    }

    /// Says "It is noon." then "In Paris.", a second of audio each, sent at input time 5 000 ms.
    private static func speak(_ responses: inout ResponseLifecycle, ledger: inout ConversationLedger) -> [String] {
        var said: [String] = []
        for (offsetMs, segment) in [(300, "It is noon."), (400, "In Paris.")] {
            let at = trigger + .milliseconds(offsetMs)
            said += describe(responses.receive(.textDelta(segment + " "), from: "resp_1", at: at, inputMs: 5_000, ledger: &ledger).actions)
            said += describe(responses.receive(.audio(second, segment: segment), from: "resp_1", at: at, inputMs: 5_000, ledger: &ledger).actions)
        }
        return said
    }

    @Test func theReplyItemOpensWithItsFirstWordsAndAudioGoesOutAsItIsPlayed() {
        var (responses, ledger) = Self.started()
        #expect(Self.speak(&responses, ledger: &ledger) == [
            "emit outputItemStarted", "emit agentTextDelta", "play", "emit agentAudio",
            "emit agentTextDelta", "play", "emit agentAudio",
        ])
        let metrics = responses.current?.metrics
        #expect(metrics?.firstTokenMs == 300 && metrics?.firstAudioMs == 300)
        #expect(metrics?.synthesizedAudioSeconds == 2)
        #expect(ledger.items.map(\.id).last == responses.current?.itemID, "the reply has its place after the user's item")
        #expect(responses.textInProgress(ofItem: responses.current?.itemID ?? "") == "It is noon. In Paris. ")
    }

    @Test func aFinishedReplyIsStoredReportedAndMeasured() {
        var (responses, ledger) = Self.started()
        _ = Self.speak(&responses, ledger: &ledger)
        let itemID = responses.current?.itemID ?? ""
        let delivery = responses.receive(.finished(.stop, nil), from: "resp_1", at: Self.trigger + .seconds(1), inputMs: 5_100, ledger: &ledger)
        #expect(!delivery.goesOn)
        #expect(Self.describe(delivery.actions) == [
            "idle 7000", "emit outputItemDone", "emit itemCompleted", "emit responseDone", "emit turnMetrics",
        ])
        #expect(ledger.message(id: itemID) == .assistant(text: "It is noon. In Paris. "))
        #expect(responses.current == nil && responses.metricsHistory.count == 1)
        let afterEnd = responses.receive(.textDelta("more"), from: "resp_1", at: Self.trigger, inputMs: 5_200, ledger: &ledger)
        #expect(!afterEnd.goesOn && afterEnd.actions.isEmpty, "an ended response takes nothing more")
    }

    @Test func theAgentStoppedMidReplyKeepsWhatTheListenerHeard() {
        var (responses, ledger) = Self.started()
        _ = Self.speak(&responses, ledger: &ledger)
        let itemID = responses.current?.itemID ?? ""
        #expect(responses.agentActivity(atInputMs: 6_500) == .speaking)
        // Input time 6 500: 1.5 s of the 2 s sent at 5 000 ms were heard.
        #expect(Self.describe(responses.stopAgent(atInputMs: 6_500, ledger: &ledger)) == [
            "idle 7000", "cut 1500", "emit outputItemDone", "emit itemCompleted", "emit responseDone", "emit turnMetrics",
        ])
        #expect(ledger.message(id: itemID) == .assistant(text: "It is noon. In", interrupted: true))
        #expect(responses.agentActivity(atInputMs: 6_500) == .idle)
    }

    @Test func aReplyStillPlayingWhenTheUserInterruptsIsStoredAsHeard() {
        var (responses, ledger) = Self.started()
        _ = Self.speak(&responses, ledger: &ledger)
        let itemID = responses.current?.itemID ?? ""
        _ = responses.receive(.finished(.stop, nil), from: "resp_1", at: Self.trigger + .seconds(1), inputMs: 5_100, ledger: &ledger)
        #expect(responses.agentActivity(atInputMs: 6_000) == .speaking, "sent, but still playing")
        #expect(Self.describe(responses.stopAgent(atInputMs: 6_000, ledger: &ledger)) == ["emit itemCompleted"])
        #expect(ledger.message(id: itemID) == .assistant(text: "It is noon.", interrupted: true))
        #expect(responses.agentActivity(atInputMs: 6_000) == .idle)
    }

    @Test func stoppingAnAgentThatHasFallenSilentChangesNothing() {
        var (responses, ledger) = Self.started()
        _ = Self.speak(&responses, ledger: &ledger)
        _ = responses.receive(.finished(.stop, nil), from: "resp_1", at: Self.trigger + .seconds(1), inputMs: 5_100, ledger: &ledger)
        let actions = responses.stopAgent(atInputMs: 8_000, ledger: &ledger)
        #expect(actions.isEmpty)
    }

    @Test func theAgentThinksUntilItsAudioPlays() {
        var (responses, ledger) = Self.started()
        #expect(responses.agentActivity(atInputMs: 4_000) == .thinking)
        _ = Self.speak(&responses, ledger: &ledger)
        #expect(responses.agentActivity(atInputMs: 5_500) == .speaking)
    }

    @Test func aClientTruncationCutsTheReplyInProgressWhenItEnds() {
        var (responses, ledger) = Self.started()
        _ = Self.speak(&responses, ledger: &ledger)
        let itemID = responses.current?.itemID ?? ""
        #expect(Self.describe(responses.truncate(itemID: itemID, audioEndMs: 1_000, ledger: &ledger) ?? []) == ["emit itemTruncated"])
        _ = responses.receive(.finished(.stop, nil), from: "resp_1", at: Self.trigger + .seconds(1), inputMs: 5_100, ledger: &ledger)
        #expect(ledger.message(id: itemID) == .assistant(text: "It is noon.", interrupted: true))
    }

    @Test func aClientTruncationCutsAFinishedReply() {
        var (responses, ledger) = Self.started()
        _ = Self.speak(&responses, ledger: &ledger)
        let itemID = responses.current?.itemID ?? ""
        _ = responses.receive(.finished(.stop, nil), from: "resp_1", at: Self.trigger + .seconds(1), inputMs: 5_100, ledger: &ledger)
        let actions = responses.truncate(itemID: itemID, audioEndMs: 1_500, ledger: &ledger)
        #expect(Self.describe(actions ?? []) == ["emit itemTruncated", "emit itemCompleted"])
        #expect(ledger.message(id: itemID) == .assistant(text: "It is noon. In", interrupted: true))
        let notAReply = responses.truncate(itemID: "item_user", audioEndMs: 100, ledger: &ledger)
        #expect(notAReply == nil, "no reply of the agent")
    }

    @Test func anOutOfBandResponseRunsBesideAndLeavesTheConversationAlone() {
        var (responses, ledger) = Self.started()
        let request = ResponseRequest(isOutOfBand: true)
        let outOfBand = responses.makeResponse(
            id: "resp_side", request: request, trigger: Self.trigger, transcriptionMs: nil, recognizedSeconds: nil, speaks: false
        )
        _ = responses.begin(outOfBand, request: request)
        #expect(responses.isOutOfBand("resp_side") && responses.current?.id == "resp_1")
        let items = ledger.items.count
        let said = responses.receive(.textDelta("Summary."), from: "resp_side", at: Self.trigger, inputMs: 5_000, ledger: &ledger)
        let done = responses.receive(.finished(.stop, nil), from: "resp_side", at: Self.trigger, inputMs: 5_000, ledger: &ledger)
        #expect(Self.describe(said.actions + done.actions) == [
            "emit outputItemStarted", "emit agentTextDelta", "emit outputItemDone", "emit responseDone",
        ])
        #expect(ledger.items.count == items && responses.metricsHistory.isEmpty)
        #expect(!responses.isOutOfBand("resp_side") && responses.current?.id == "resp_1")
    }

    @Test func finishingIsDoneOnce() {
        var (responses, ledger) = Self.started()
        #expect(Self.describe(responses.finish("resp_1", status: .cancelled, ledger: &ledger)) == [
            "idle 0", "emit responseDone", "emit turnMetrics",
        ])
        let again = responses.finish("resp_1", status: .cancelled, ledger: &ledger)
        #expect(again.isEmpty)
    }
}
