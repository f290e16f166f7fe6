import Testing
@testable import ParleyCore

/// What a session does about speech over its agent: the interruption policy's decisions in,
/// the session's actions out, no session, no sockets.
@Suite struct InterruptionJudgeTests {
    private static let started = TurnDetector.Action.speechStarted(audioStartMs: 1_000)
    private static let stopped = TurnDetector.Action.speechStopped(audioEndMs: 1_600)
    private static let committed = TurnDetector.Action.commit(
        TurnDetector.Utterance(samples: [], audioStartMs: 1_000, audioEndMs: 1_600, reachedMaximumLength: false)
    )

    @Test func speechThatMayInterruptPausesTheAgentsAudio() {
        var judge = InterruptionJudge()
        #expect(judge.respond(to: .pause(speechStartMs: 1_000), atMs: 1_200) == [.pauseOutput(atMs: 1_200)])
        #expect(judge.pausedAtMs == 1_200)
    }

    @Test func speechToJudgeIsTranscribed() {
        var judge = InterruptionJudge()
        #expect(judge.respond(to: .judge(speechStartMs: 1_000, speechEndMs: 1_400), atMs: 1_500)
            == [.transcribe(speechStartMs: 1_000, speechEndMs: 1_400)])
        #expect(judge.respond(to: .none, atMs: 1_520) == [])
    }

    @Test func anInterruptionStartsTheHeldTurnThenStopsTheAgentWhereItWasPaused() {
        var judge = InterruptionJudge()
        #expect(judge.admit([Self.started], holding: true, deciding: true) == [])
        #expect(judge.isHoldingTurn)
        _ = judge.respond(to: .pause(speechStartMs: 1_000), atMs: 1_200)
        let actions = judge.respond(to: .interrupt(speechStartMs: 1_000, reason: .words), atMs: 1_900, words: "Wait")
        #expect(actions == [
            .announce(speechStartMs: 1_000, atMs: 1_900, interrupts: true, reason: .words, words: "Wait"),
            .startTurn([Self.started]),
            .stopAgent(atMs: 1_200),
        ])
        #expect(!judge.isHoldingTurn)
        #expect(judge.pausedAtMs == nil)
    }

    @Test func anInterruptionWithoutAPauseStopsTheAgentThere() {
        var judge = InterruptionJudge()
        #expect(judge.respond(to: .interrupt(speechStartMs: 1_000, reason: .longSpeech), atMs: 1_900) == [
            .announce(speechStartMs: 1_000, atMs: 1_900, interrupts: true, reason: .longSpeech, words: nil),
            .startTurn([]),
            .stopAgent(atMs: 1_900),
        ])
    }

    @Test func speechThatMeantNothingResumesThePausedAudioAndForgetsItsTurn() {
        var judge = InterruptionJudge()
        _ = judge.admit([Self.started], holding: true, deciding: true)
        _ = judge.respond(to: .pause(speechStartMs: 1_000), atMs: 1_200)
        #expect(judge.respond(to: .resume(speechStartMs: 1_000, reason: .backchannel), atMs: 1_700, words: "mm-hmm") == [
            .announce(speechStartMs: 1_000, atMs: 1_700, interrupts: false, reason: .backchannel, words: "mm-hmm"),
            .resumeOutput(atMs: 1_700),
            .forgetTurn,
        ])
        #expect(!judge.isHoldingTurn)
        #expect(judge.pausedAtMs == nil)
    }

    @Test func speechThatMeantNothingResumesNothingThatWasNotPaused() {
        var judge = InterruptionJudge()
        #expect(judge.respond(to: .resume(speechStartMs: 1_000, reason: .noVoice), atMs: 1_300) == [
            .announce(speechStartMs: 1_000, atMs: 1_300, interrupts: false, reason: .noVoice, words: nil),
            .forgetTurn,
        ])
    }

    @Test func aTurnThatBeginsWhileNothingHoldsItGoesOutAtOnce() {
        var judge = InterruptionJudge()
        #expect(judge.admit([Self.started], holding: false, deciding: false) == [Self.started])
        #expect(!judge.isHoldingTurn)
    }

    @Test func aHeldTurnGoesOutWithTheNextActionsOnceNothingHoldsIt() {
        var judge = InterruptionJudge()
        let idle = TurnDetector.Action.idleTimeout(audioStartMs: 0, audioEndMs: 900)
        #expect(judge.admit([idle, Self.started], holding: true, deciding: true) == [idle])
        #expect(judge.admit([Self.stopped], holding: false, deciding: false) == [Self.started, Self.stopped])
        #expect(!judge.isHoldingTurn)
    }

    @Test func aHeldTurnThatEndsWhileThePolicyHeardNothingIsDropped() {
        var judge = InterruptionJudge()
        _ = judge.admit([Self.started], holding: true, deciding: true)
        #expect(judge.admit([Self.stopped, Self.committed], holding: true, deciding: false) == [])
        #expect(!judge.isHoldingTurn)
    }

    @Test func aHeldTurnThatEndsWhileThePolicyDecidesStaysHeld() {
        var judge = InterruptionJudge()
        _ = judge.admit([Self.started], holding: true, deciding: true)
        #expect(judge.admit([Self.stopped, Self.committed], holding: true, deciding: true) == [])
        #expect(judge.isHoldingTurn)
    }
}
