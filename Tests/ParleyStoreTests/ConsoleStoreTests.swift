import Foundation
import ParleyCore
import Testing
@testable import ParleyStore

/// Calls and per-turn figures, the operator console's data, on both engines.
@Suite(.throwawayPostgres) struct ConsoleStoreTests {
    private let start = Date(timeIntervalSince1970: 1_700_000_000)

    @Test(arguments: StoreEngine.allCases)
    func turnFiguresSurviveReopening(engine: StoreEngine) async throws {
        let location = try await engine.freshLocation()
        let figures = TurnFiguresRecord(
            responseID: "resp_1", conversationID: "conv_1", sessionID: "sess_1", userItemID: "item_1",
            turnEndedAt: start.addingTimeInterval(2.5), speechEndAudioMs: 1_870, silenceWindowMs: 500, detectorWaitMs: 120.5, transcriptionMs: 210.25,
            firstTokenMs: 390, firstAudioMs: 640.75, status: "cancelled", unheardText: "and then the rest.",
            verdicts: [
                InterruptionVerdict(interrupts: false, reason: "backchannel", words: "mhm", speechStartMs: 2_100),
                InterruptionVerdict(interrupts: true, reason: "words", words: "wait, stop", speechStartMs: 4_000),
            ]
        )
        let typed = TurnFiguresRecord(
            responseID: "resp_2", conversationID: "conv_1", sessionID: "sess_1", turnEndedAt: start.addingTimeInterval(9),
            firstTokenMs: 80, status: "cancelled"
        )
        do {
            let store = try location.open()
            try await store.ensureConversation(id: "conv_1", agentID: "agent_1")
            try await store.saveTurnFigures(typed)
            try await store.saveTurnFigures(figures)
            await store.close()
        }
        let reopened = try location.open()
        #expect(try await reopened.turnFigures(conversationID: "conv_1") == [figures, typed])
        #expect(try await reopened.turnFigures(conversationID: "conv_2").isEmpty)
        #expect(try await reopened.turnFigures(from: start, before: start.addingTimeInterval(5)) == [figures])
        #expect(figures.voiceToVoiceMs == 1_261.25)
        #expect(typed.voiceToVoiceMs == nil)
        // Saving a response's figures again replaces them.
        var revised = figures
        revised.firstAudioMs = 700
        try await reopened.saveTurnFigures(revised)
        #expect(try await reopened.turnFigures(conversationID: "conv_1").first == revised)
        #expect(try await reopened.deleteConversation(id: "conv_1"))
        #expect(try await reopened.turnFigures(conversationID: "conv_1").isEmpty)
        await reopened.close()
    }

    @Test(arguments: StoreEngine.allCases)
    func callsRecordTheirEndAndJoinTheirAgent(engine: StoreEngine) async throws {
        let store = try await engine.freshLocation().open()
        try await store.ensureConversation(id: "conv_1", agentID: "agent_1")
        var call = CallRecord(id: "sess_1", conversationID: "conv_1", userID: "alice", door: "webrtc", nodeID: "node_a", startedAt: start)
        try await store.saveCall(call)
        #expect(try await store.calls(CallQuery(isLive: true)).calls.map(\.id) == ["sess_1"])
        call.endedAt = start.addingTimeInterval(42)
        call.errorCount = 1
        call.turnCount = 3
        try await store.saveCall(call)
        var expected = call
        expected.agentID = "agent_1"
        #expect(try await store.calls(conversationID: "conv_1") == [expected])
        #expect(try await store.calls(CallQuery(isLive: true)).calls.isEmpty)
        #expect(try await store.callStartTimes(from: start, before: start.addingTimeInterval(1)) == [start])
        await store.close()
    }

    @Test(arguments: StoreEngine.allCases)
    func callsFilterAndPageThroughAThousand(engine: StoreEngine) async throws {
        let store = try await engine.freshLocation().open()
        let doors = ["websocket", "webrtc", "twilio", "sip"]
        for index in 0..<1_000 {
            let conversation = "conv_\(index)"
            try await store.ensureConversation(id: conversation, agentID: index % 2 == 0 ? "agent_even" : "agent_odd")
            try await store.saveCall(CallRecord(
                id: String(format: "sess_%04d", index), conversationID: conversation, userID: "user_\(index % 10)",
                door: doors[index % 4], nodeID: "node_a", startedAt: start.addingTimeInterval(Double(index / 2)),
                endedAt: start.addingTimeInterval(Double(index / 2) + Double(index % 60)), errorCount: index % 7 == 0 ? 1 : 0
            ))
        }
        // Every call once, newest first, in pages of 100 (two calls share each start time).
        var seen: [String] = []
        var cursor: CallCursor?
        let clock = ContinuousClock()
        let began = clock.now
        repeat {
            let page = try await store.calls(CallQuery(limit: 100, after: cursor))
            seen += page.calls.map(\.id)
            cursor = page.nextCursor
        } while cursor != nil
        let elapsed = clock.now - began
        #expect(seen.count == 1_000 && Set(seen).count == 1_000)
        #expect(seen.first == "sess_0999" && seen.last == "sess_0000")
        #expect(elapsed < .seconds(2), "ten pages of a thousand calls took \(elapsed)")
        // Filters combine.
        let filtered = try await store.calls(CallQuery(
            agentID: "agent_even", userID: "user_4", door: "websocket", minimumSeconds: 30, hasErrors: true, limit: 1_000
        ))
        let expected = (0..<1_000).filter { $0 % 2 == 0 && $0 % 10 == 4 && $0 % 4 == 0 && $0 % 60 >= 30 && $0 % 7 == 0 }
        #expect(filtered.calls.map(\.id) == expected.reversed().map { String(format: "sess_%04d", $0) })
        #expect(filtered.nextCursor == nil)
        // Search matches ids and users, and takes LIKE's wildcards literally.
        #expect(try await store.calls(CallQuery(search: "SESS_0123")).calls.map(\.id) == ["sess_0123"])
        #expect(try await store.calls(CallQuery(search: "user_9", limit: 1_000)).calls.count == 100)
        #expect(try await store.calls(CallQuery(search: "%")).calls.isEmpty)
        let window = try await store.calls(CallQuery(startedFrom: start.addingTimeInterval(10), startedBefore: start.addingTimeInterval(12), limit: 10))
        #expect(window.calls.map(\.id) == ["sess_0023", "sess_0022", "sess_0021", "sess_0020"])
        await store.close()
    }

    @Test(arguments: StoreEngine.allCases)
    func callsAreFoundByWhatWasSaidAndPagedTheSameWay(engine: StoreEngine) async throws {
        let store = try await engine.freshLocation().open()
        for index in 0..<30 {
            let conversation = "conv_\(index)"
            try await store.ensureConversation(id: conversation, agentID: "agent_1")
            try await store.saveCall(CallRecord(
                id: String(format: "sess_%02d", index), conversationID: conversation, userID: "user_1", door: "sip", nodeID: "node_a",
                startedAt: start.addingTimeInterval(Double(index))
            ))
            let topic = index % 3 == 0 ? "My BILLING address is wrong!" : "What's the weather in Paris?"
            try await store.appendItem(ItemRecord(id: "item_u", conversationID: conversation, message: .user(topic), createdAt: start))
            let reply = index == 7 ? "Your refund (50%) is on its way." : "Sure."
            try await store.appendItem(ItemRecord(id: "item_a", conversationID: conversation, message: .assistant(text: reply), createdAt: start))
        }
        func found(_ words: [String], limit: Int = 100, after cursor: CallCursor? = nil) async throws -> CallPage {
            try await store.calls(CallQuery(transcriptWords: words, limit: limit, after: cursor))
        }
        let billing = (0..<30).filter { $0 % 3 == 0 }.reversed().map { String(format: "sess_%02d", $0) }
        // Every word must be said, as the start of a word, case aside; the agent's words count too.
        #expect(try await found(["bill", "wrong"]).calls.map(\.id) == billing)
        #expect(try await found(["billing", "paris"]).calls.isEmpty)
        #expect(try await found(["ill"]).calls.isEmpty, "a word is matched from its start")
        #expect(try await found(["refund"]).calls.map(\.id) == ["sess_07"])
        // LIKE's wildcards are no words; JSON keys are not what was said.
        #expect(try await found(["%"]).calls.count == 30)
        #expect(try await found(["user"]).calls.isEmpty)
        #expect(try await found(["text"]).calls.isEmpty)
        // Pages of 4 through the ten matches, keyset-paged like any other list.
        var paged: [String] = []
        var cursor: CallCursor?
        repeat {
            let page = try await found(["wrong"], limit: 4, after: cursor)
            paged += page.calls.map(\.id)
            cursor = page.nextCursor
        } while cursor != nil
        #expect(paged == billing)
        // Writing an item again replaces its words.
        try await store.appendItem(ItemRecord(id: "item_a", conversationID: "conv_1", message: .assistant(text: "A refund, then."), createdAt: start))
        #expect(try await found(["refund"]).calls.map(\.id) == ["sess_07", "sess_01"])
        await store.close()
    }

    @Test(arguments: StoreEngine.allCases)
    func itemsStoredBeforeWordsWereKeptAreFoundByWhatWasSaid(engine: StoreEngine) async throws {
        let location = try await engine.freshLocation()
        try ItemKeyMigrationTests.writePreviousRelease(at: location)
        let store = try location.open()
        for conversation in ["conv_a", "conv_b"] {
            try await store.saveCall(CallRecord(id: "sess_" + conversation, conversationID: conversation, userID: nil, door: "sip", nodeID: "local", startedAt: start))
        }
        #expect(try await store.calls(CallQuery(transcriptWords: ["time", "NOON"])).calls.map(\.id) == ["sess_conv_a"])
        #expect(try await store.calls(CallQuery(transcriptWords: ["hi"])).calls.map(\.id) == ["sess_conv_b"])
        #expect(try await store.calls(CallQuery(transcriptWords: ["assistant"])).calls.isEmpty, "the stored form's keys are no words said")
        await store.close()
    }

    @Test func cursorsReadBackWhatTheyWrite() {
        let cursor = CallCursor(startedAt: 1_700_000_000.125, id: "sess_a_b")
        #expect(CallCursor(text: cursor.text) == cursor)
        #expect(CallCursor(text: "nonsense") == nil)
        #expect(CallCursor(text: "12_") == nil)
        #expect(CallCursor(text: "inf_sess") == nil)
    }
}
