import Foundation
import ParleyCore
@testable import ParleyServer
import ParleyStore
import ParleySync
import Testing

/// The per-turn figures a session's events make, on a clock the test moves.
@Suite struct TurnFiguresRecorderTests {
    /// A clock that reads what the test last set.
    final class TestClock: Sendable {
        private let time = Locked(Date(timeIntervalSince1970: 1_800_000_000))
        var now: Date { time.withLock { $0 } }
        func advance(milliseconds: Double) { time.withLock { $0 = $0.addingTimeInterval(milliseconds / 1_000) } }
    }

    @Test func aSpokenTurnGivesItsSilenceWindowDetectorWaitAndStageFigures() {
        let clock = TestClock()
        var recorder = TurnFiguresRecorder(conversationID: "conv_1", sessionID: "sess_1", now: { clock.now })
        func take(_ event: VoiceSessionEvent) -> TurnFiguresRecord? { recorder.observe(event, silenceWindowMs: 500) }
        #expect(take(.speechStarted(itemID: "item_u", audioStartMs: 1_000)) == nil)
        // 1.2 s of speech, then the 500 ms window and 80 ms more before the turn ends.
        clock.advance(milliseconds: 1_780)
        #expect(take(.speechStopped(itemID: "item_u", audioEndMs: 2_200)) == nil)
        #expect(take(.inputCommitted(itemID: "item_u", previousItemID: nil)) == nil)
        let ended = clock.now
        #expect(take(.responseStarted(responseID: "resp_1", request: ResponseRequest())) == nil)
        #expect(take(.responseDone(responseID: "resp_1", status: .completed, error: nil, usage: nil)) == nil)
        let figures = take(.turnMetrics(TurnMetrics(responseID: "resp_1", transcriptionMs: 120, firstTokenMs: 300, firstAudioMs: 450)))
        #expect(figures == TurnFiguresRecord(
            responseID: "resp_1", conversationID: "conv_1", sessionID: "sess_1", userItemID: "item_u", turnEndedAt: ended,
            speechEndAudioMs: 2_200, silenceWindowMs: 500, detectorWaitMs: figures?.detectorWaitMs, transcriptionMs: 120,
            firstTokenMs: 300, firstAudioMs: 450, status: "completed"
        ))
        #expect(abs((figures?.detectorWaitMs ?? 0) - 80) < 0.001)
    }

    @Test func aLateTruncationAndVerdictAmendTheFiguresAlreadyGiven() {
        let clock = TestClock()
        var recorder = TurnFiguresRecorder(conversationID: "conv_1", sessionID: "sess_1", now: { clock.now })
        func take(_ event: VoiceSessionEvent) -> TurnFiguresRecord? { recorder.observe(event, silenceWindowMs: nil) }
        _ = take(.responseStarted(responseID: "resp_1", request: ResponseRequest()))
        _ = take(.agentTextDelta(responseID: "resp_1", itemID: "item_a", delta: "Once upon a time, "))
        _ = take(.agentTextDelta(responseID: "resp_1", itemID: "item_a", delta: "a dragon baked bread."))
        _ = take(.responseDone(responseID: "resp_1", status: .completed, error: nil, usage: nil))
        let first = take(.turnMetrics(TurnMetrics(responseID: "resp_1", firstTokenMs: 90)))
        #expect(first?.userItemID == nil && first?.silenceWindowMs == nil && first?.unheardText == nil)
        // The reply was still playing when the caller spoke over it.
        let verdict = take(.interruptionDecided(speechStartMs: 5_000, audioMs: 5_400, interrupts: true, reason: .words, words: "wait"))
        #expect(verdict?.verdicts == [InterruptionVerdict(interrupts: true, reason: "words", words: "wait", speechStartMs: 5_000)])
        let truncated = take(.itemTruncated(itemID: "item_a", audioEndMs: 5_400, heardText: "Once upon a time, "))
        #expect(truncated?.unheardText == "a dragon baked bread.")
        #expect(truncated?.responseID == "resp_1" && truncated?.verdicts.count == 1)
        // An out-of-band response answers no turn.
        _ = take(.responseStarted(responseID: "resp_oob", request: ResponseRequest(isOutOfBand: true)))
        #expect(take(.turnMetrics(TurnMetrics(responseID: "resp_oob", firstTokenMs: 10))) == nil)
    }
}
