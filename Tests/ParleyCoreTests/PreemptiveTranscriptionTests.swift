import Testing
import ParleyTesting
@testable import ParleyCore

/// With server VAD the turn is transcribed while its silence window still runs, and the early
/// transcript is used when the turn ends — or dropped when the user speaks again.
@Suite struct PreemptiveTranscriptionTests {
    /// 16 kHz samples in `milliseconds`.
    private static func samples(_ milliseconds: Int) -> Int { 16 * milliseconds }

    @Test func theTranscriptStartedDuringTheSilenceIsTheTurnsTranscript() async throws {
        let gate = AsyncGate()
        let early = ScriptedSpeechRecognizer(results: [.success("What time is it?")], gate: gate)
        let (session, recorder) = makeSession(recognizer: early, model: ScriptedLanguageModel(replies: [.text("Noon.")]))
        try await ScenarioAudio.ask(session)
        // 200 ms into the 300 ms window: no turn end yet, but the transcription has begun.
        await gate.waitForArrivals(1)
        #expect(await recorder.count { if case .speechStopped = $0 { true } else { false } } == 0)

        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 200), sampleRate: 16_000)
        gate.open()
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        #expect(early.finalUtteranceSampleCounts.count == 1, "one transcription for the turn")
        let heard = try #require(early.finalUtteranceSampleCounts.first)
        #expect(heard < Self.samples(300 + 800 + 300), "transcribed before the whole silence window had passed")
        #expect(await session.ledger.messages.first == .user("What time is it?"))
    }

    @Test func speakingAgainDropsTheEarlyTranscription() async throws {
        let gate = AsyncGate()
        let recognizer = ScriptedSpeechRecognizer(results: [.success("What time is it in Paris?")], gate: gate)
        let (session, recorder) = makeSession(recognizer: recognizer, model: ScriptedLanguageModel(replies: [.text("Noon.")]))
        try await ScenarioAudio.ask(session)
        await gate.waitForArrivals(1)  // the early transcription of "What time is it"
        try await session.appendAudio(ScenarioAudio.speech(milliseconds: 600), sampleRate: 16_000)
        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 500), sampleRate: 16_000)
        await gate.waitForArrivals(2)  // a second early one in the last pause, which the turn then uses
        gate.open()

        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        #expect(await recorder.count(Match.finalTranscript) == 1)
        #expect(recognizer.finalUtteranceSampleCounts.count == 1, "the dropped transcription took nothing from the script")
        let heard = try #require(recognizer.finalUtteranceSampleCounts.first)
        let delay = try #require(VoiceSessionConfiguration().preemptiveTranscriptionAfterMs)
        #expect(heard >= Self.samples(300 + 800 + 200 + 600 + delay), "the whole turn was transcribed")
        #expect(await session.ledger.messages.first == .user("What time is it in Paris?"))
        await session.close()
        #expect(await session.hasRunningTasks == false)
    }

    @Test func turnedOffTheTranscriptionWaitsForTheTurnToEnd() async throws {
        let gate = AsyncGate()
        let recognizer = ScriptedSpeechRecognizer(results: [.success("What time is it?")], gate: gate)
        var configuration = VoiceSessionConfiguration()
        configuration.preemptiveTranscriptionAfterMs = nil
        let (session, recorder) = makeSession(recognizer: recognizer, model: ScriptedLanguageModel(replies: [.text("Noon.")]), configuration: configuration)
        try await ScenarioAudio.ask(session)
        #expect(gate.arrivalCount == 0)
        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 200), sampleRate: 16_000)
        #expect(await recorder.waitFor { if case .speechStopped = $0 { true } else { false } })
        await gate.waitForArrivals(1)
        gate.open()
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        let heard = try #require(recognizer.finalUtteranceSampleCounts.first)
        #expect(heard >= Self.samples(300 + 800 + 300))
    }
}
