import Testing
import ParleyTesting
@testable import ParleyCore

/// Which early work on a turn in its silence window is kept, handed over or dropped:
/// `PreemptiveGeneration`'s decisions, no session, no providers.
@Suite struct PreemptiveGenerationDecisionTests {
    private static let turn: [Float] = [0.1, 0.2, 0.3]

    private static func transcript(_ text: String) -> Transcription {
        Transcription(text: text, audioDuration: 1, processingDuration: 0)
    }

    /// Starts early work: silence from 1 000 ms, transcribed at 1 200 ms (generation 1).
    private static func transcribing(_ text: String = "What time is it?") -> (PreemptiveGeneration, Task<Transcription, any Error>) {
        var early = PreemptiveGeneration()
        let task = Task<Transcription, any Error> { transcript(text) }
        _ = early.follow(silenceStartedAtMs: 1_000, nowMs: 1_200, delayMs: 200, turn: { turn }, transcribe: { _ in task })
        return (early, task)
    }

    /// An answer to generation 1 whose task waits at `gate` until cancelled.
    private static func answer(to text: String = "What time is it?", after lastItemID: String? = "item_0", gate: AsyncGate) -> SpeculativeResponse {
        SpeculativeResponse(
            id: "resp_early", generation: 1, transcription: transcript(text), transcript: text, lastItemID: lastItemID,
            task: Task { await gate.wait() }
        )
    }

    @Test func theTurnIsTranscribedOnceItsSilenceIsLongEnough() {
        var early = PreemptiveGeneration()
        var heard: [[Float]] = []
        let transcribe = { (samples: [Float]) -> Task<Transcription, any Error> in
            heard.append(samples)
            return Task { Self.transcript("What time is it?") }
        }
        let tooSoon = early.follow(silenceStartedAtMs: 1_000, nowMs: 1_150, delayMs: 200, turn: { Self.turn }, transcribe: transcribe)
        #expect(tooSoon == nil && heard.isEmpty)
        let started = early.follow(silenceStartedAtMs: 1_000, nowMs: 1_200, delayMs: 200, turn: { Self.turn }, transcribe: transcribe)
        #expect(started != nil && heard == [Self.turn])
        #expect(early.isTranscribing && early.generation == 1)
        let again = early.follow(silenceStartedAtMs: 1_000, nowMs: 1_260, delayMs: 200, turn: { Self.turn }, transcribe: transcribe)
        #expect(again == nil && heard.count == 1, "one transcription per silence")
    }

    @Test func withoutADelayNothingIsTranscribedEarly() {
        var early = PreemptiveGeneration()
        let started = early.follow(silenceStartedAtMs: 1_000, nowMs: 9_000, delayMs: nil, turn: { Self.turn }) { _ in
            Issue.record("nothing should be transcribed")
            return Task { Self.transcript("") }
        }
        #expect(started == nil && !early.isTranscribing)
    }

    @Test func speakingAgainDropsTheTranscriptionAndTheAnswerToIt() async {
        var (early, transcription) = Self.transcribing()
        let gate = AsyncGate()
        defer { gate.open() }
        #expect(early.mayAnswer(generation: 1))
        early.answering(Self.answer(gate: gate))
        #expect(!early.mayAnswer(generation: 1), "one answer at a time")
        _ = early.follow(silenceStartedAtMs: nil, nowMs: 1_300, delayMs: 200, turn: { Self.turn }) { _ in Task { Self.transcript("") } }
        #expect(transcription.isCancelled)
        #expect(early.answer == nil && !early.isTranscribing)
        #expect(!early.mayAnswer(generation: 1))
    }

    @Test func anAnswerToAnEarlierTranscriptionIsDroppedWhenANewOneStarts() async {
        var (early, _) = Self.transcribing()
        let gate = AsyncGate()
        defer { gate.open() }
        let answer = Self.answer(gate: gate)
        early.answering(answer)
        // The user spoke again and paused again: a second transcription (generation 2).
        _ = early.follow(silenceStartedAtMs: 1_600, nowMs: 1_700, delayMs: 200, turn: { Self.turn }) { _ in Task { Self.transcript("") } }
        _ = early.follow(silenceStartedAtMs: 1_600, nowMs: 1_800, delayMs: 200, turn: { Self.turn }) { _ in Task { Self.transcript("x") } }
        #expect(early.generation == 2)
        #expect(early.answer == nil && answer.task.isCancelled)
        #expect(!early.mayAnswer(generation: 1) && early.mayAnswer(generation: 2))
    }

    @Test func theAnswersEventsAreHeldAndAFailureDropsIt() {
        var (early, _) = Self.transcribing()
        let gate = AsyncGate()
        defer { gate.open() }
        early.answering(Self.answer(gate: gate))
        let held = early.hold(.textDelta("It is"), from: "resp_early", at: .milliseconds(1_300))
        let elsewhere = early.hold(.textDelta("other"), from: "resp_other", at: .milliseconds(1_300))
        #expect(held && !elsewhere)
        #expect(early.answer?.held.count == 1)
        let afterFailure = early.hold(.failed(SessionError(code: "response_failed", message: "down")), from: "resp_early", at: .milliseconds(1_350))
        #expect(!afterFailure && early.answer == nil)
    }

    @Test func theEndedTurnGetsTheEarlyTranscriptionWithTheTranscriptItsAnswerHeard() {
        var (early, transcription) = Self.transcribing()
        let gate = AsyncGate()
        defer { gate.open() }
        early.answering(Self.answer(gate: gate))
        let handover = early.turnEnded(reachedMaximumLength: false)
        #expect(handover?.transcription == transcription)
        #expect(handover?.result?.text == "What time is it?")
        #expect(early.answer?.turnEnded == true && !early.isTranscribing)
    }

    @Test func theEndedTurnGetsTheEarlyTranscriptionAloneWhenNothingAnswersIt() {
        var (early, transcription) = Self.transcribing()
        let handover = early.turnEnded(reachedMaximumLength: false)
        #expect(handover?.transcription == transcription && handover?.result == nil)
    }

    @Test func aTurnForcedToEndByItsLengthDropsTheEarlyWork() {
        var (early, transcription) = Self.transcribing()
        let gate = AsyncGate()
        defer { gate.open() }
        let answer = Self.answer(gate: gate)
        early.answering(answer)
        let handover = early.turnEnded(reachedMaximumLength: true)
        #expect(handover == nil)
        #expect(transcription.isCancelled && answer.task.isCancelled)
        #expect(early.answer == nil)
    }

    @Test func theAnswerIsTakenOnlyForTheSameWordsAfterTheSameConversation() {
        let gate = AsyncGate()
        defer { gate.open() }
        var (early, _) = Self.transcribing()
        let answer = Self.answer(gate: gate)
        early.answering(answer)
        _ = early.turnEnded(reachedMaximumLength: false)
        let otherWords = early.takeAnswer(to: "What time is it in Paris?", after: "item_0")
        let otherConversation = early.takeAnswer(to: "What time is it?", after: "item_9")
        #expect(otherWords == nil && otherConversation == nil)
        let taken = early.takeAnswer(to: "What time is it?", after: "item_0")
        #expect(taken?.id == "resp_early")
        #expect(early.answer == nil && !answer.task.isCancelled)
    }

    @Test func anEndedTurnsAnswerThatWasNotTakenIsDropped() {
        let gate = AsyncGate()
        defer { gate.open() }
        var (early, _) = Self.transcribing()
        let answer = Self.answer(gate: gate)
        early.answering(answer)
        _ = early.turnEnded(reachedMaximumLength: false)
        early.dropEndedTurnsAnswer()
        #expect(early.answer == nil && answer.task.isCancelled)
    }

    @Test func anAnswerWhoseTurnGoesOnIsNeitherTakenNorDroppedAsEnded() {
        let gate = AsyncGate()
        defer { gate.open() }
        var (early, _) = Self.transcribing()
        early.answering(Self.answer(gate: gate))
        let taken = early.takeAnswer(to: "What time is it?", after: "item_0")
        #expect(taken == nil)
        early.dropEndedTurnsAnswer()
        #expect(early.answer != nil)
        early.cancel()
        #expect(early.answer == nil && !early.isTranscribing)
    }
}
