import Foundation
import ParleyCore
import ParleyTesting
import Testing

/// How `semantic_vad` reads a pause's transcript: the marks settle it, the text judge reads the
/// rest, and the word rule stands in for a judge that is missing, late or failing.
@Suite struct PauseTranscriptReadingTests {
    @Test(arguments: [
        ("What time is it in Tokyo?", false), ("Stop it!", false), ("So the thing is...", true), ("Move it to the living room,", true),
        ("I'd like to book a flight to…", true), ("", false),
    ])
    func marksSettleThePauseWithoutTheJudge(transcript: String, unfinished: Bool) {
        #expect(PauseTranscriptReading.read(transcript, hasJudge: true) == .settled(unfinished: unfinished))
    }

    @Test func withoutAJudgeTheWordRuleDecides() {
        #expect(PauseTranscriptReading.read("Book a flight to.", hasJudge: false) == .settled(unfinished: true))
        #expect(PauseTranscriptReading.read("She wants.", hasJudge: false) == .settled(unfinished: false))
    }

    @Test func theJudgeReadsWhatTheMarksLeaveOpen() async {
        #expect(PauseTranscriptReading.read("Book a flight to.", hasJudge: true) == .askJudge(unfinishedByWords: true))
        // A question mark after a word that needs more: a fragment or a question on a preposition.
        #expect(PauseTranscriptReading.read("How far is it from London to?", hasJudge: true) == .askJudge(unfinishedByWords: false))
        #expect(PauseTranscriptReading.read("How far is it from London to?", hasJudge: false) == .settled(unfinished: false))
        #expect(await PauseTranscriptReading.isUnfinished("She wants.", judge: FixedJudge(isComplete: false)))
        #expect(await !PauseTranscriptReading.isUnfinished("Turn the lights on.", judge: FixedJudge(isComplete: true)))
    }

    @Test func onlyAMarkOrTheJudgeSayAThoughtIsComplete() async {
        #expect(await PauseTranscriptReading.saysComplete("What is the capital of Australia?", judge: nil))
        #expect(await PauseTranscriptReading.saysComplete("Stop it!", judge: nil))
        // The word rule finds nothing wrong here, but nothing says the thought is over either.
        #expect(await !PauseTranscriptReading.saysComplete("I'd like to book a flight", judge: nil))
        #expect(await !PauseTranscriptReading.saysComplete("How far is it from London to?", judge: nil))
        #expect(await !PauseTranscriptReading.saysComplete("", judge: FixedJudge(isComplete: true)))
        #expect(await PauseTranscriptReading.saysComplete("Please cancel my meeting with David.", judge: FixedJudge(isComplete: true)))
        #expect(await !PauseTranscriptReading.saysComplete("Please cancel my meeting with David.", judge: FixedJudge(isComplete: false)))
        #expect(await !PauseTranscriptReading.saysComplete("Please cancel my meeting.", judge: SilentJudge(), deadline: .milliseconds(20)))
    }

    @Test func aJudgeThatNeverAnswersIsDroppedAtTheDeadline() async {
        #expect(await PauseTranscriptReading.isUnfinished("Book a flight to.", judge: SilentJudge(), deadline: .milliseconds(20)))
        #expect(await !PauseTranscriptReading.isUnfinished("She wants.", judge: SilentJudge(), deadline: .milliseconds(20)))
    }
}

/// A judge with one answer for everything.
private struct FixedJudge: TurnCompletionJudge {
    var isComplete: Bool
    func judge(_ transcript: String) async throws -> TurnCompletionVerdict {
        TurnCompletionVerdict(probability: isComplete ? 0.9 : 0.001, isComplete: isComplete)
    }
}

/// A judge that answers only when cancelled, and then with an error.
private struct SilentJudge: TurnCompletionJudge {
    func judge(_ transcript: String) async throws -> TurnCompletionVerdict {
        try await Task.sleep(for: .seconds(3_600))
        return TurnCompletionVerdict(probability: 1, isComplete: true)
    }
}

/// The session asks its text judge when the audio model calls a pause complete.
@Suite struct TurnCompletionJudgeSessionTests {
    /// "…and she wants." passes the word rule; the judge keeps the turn open until the rest.
    @Test func aPauseTheJudgeCallsUnfinishedDoesNotEndTheTurn() async throws {
        let (session, recorder) = try await speakAThoughtWithAPause(
            transcripts: ["My sister is coming over and she wants.", "My sister is coming over and she wants to stay."],
            judge: WordJudge(unfinishedEnding: "wants")
        )
        let verdicts = await recorder.events.compactMap { event -> Bool? in
            if case .turnJudged(_, _, _, let endsTurn, _) = event { endsTurn } else { nil }
        }
        #expect(verdicts == [false, true], "\(verdicts)")
        #expect(await session.ledger.messages.first == .user("My sister is coming over and she wants to stay."))
    }
}

/// The session reads a pause's words when the audio model calls it incomplete, too.
@Suite struct CompleteByWordsSessionTests {
    /// Silence from the end of the speech to `speech_stopped`, for a pause whose audio the
    /// model gives `probability` and whose early transcript is `transcript`, each word heard
    /// with `wordConfidence`.
    private func silenceEndingTheTurn(
        transcript: String, probability: Float = 0.1, wordConfidence: Float? = nil
    ) async throws -> Int? {
        let (session, recorder) = makeSemanticSession(
            recognizer: ScriptedSpeechRecognizer(texts: [transcript, transcript], wordConfidence: wordConfidence), probability: probability
        )
        try await speakUntilThePauseIsJudged(session, recorder) { if case .turnJudged(_, _, _, _, transcript) = $0 { true } else { false } }
        for _ in 0..<24 { try await session.appendAudio(ScenarioAudio.silence(milliseconds: 200), sampleRate: 16_000) }
        #expect(await recorder.waitFor { if case .speechStopped = $0 { true } else { false } })
        return await recorder.events.lazy.compactMap { event -> Int? in
            if case .speechStopped(_, let audioEndMs) = event { audioEndMs - 1_100 } else { nil }
        }.first
    }

    @Test func aQuestionTheAudioModelMissedEndsAfterTheWordsShortWait() async throws {
        let silence = try #require(try await silenceEndingTheTurn(transcript: "What is the capital of Australia?"))
        let check = ServerVADSettings.Eagerness.auto.completionCheck
        #expect(silence >= check.completeByWordsSilenceMs && silence < check.completeByWordsSilenceMs + 100, "\(silence) ms")
        #expect(check.completeByWordsSilenceMs == 600)
    }

    /// "Could you check if" heard as "Could you check him?": the audio model and the question
    /// mark both call it complete, but the recognizer doubted "him".
    @Test func aDoubtfulLastWordDoesNotEndTheTurnAtOnce() async throws {
        let check = ServerVADSettings.Eagerness.auto.completionCheck
        let doubted = try #require(try await silenceEndingTheTurn(transcript: "Could you check him?", probability: 0.95, wordConfidence: 0.33))
        #expect(doubted >= check.doubtfulWordsSilenceMs && doubted < check.doubtfulWordsSilenceMs + 100, "\(doubted) ms")
        #expect(check.doubtfulWordsSilenceMs == 2_000)
        let sure = try #require(try await silenceEndingTheTurn(transcript: "Could you check the time?", probability: 0.95, wordConfidence: 0.97))
        #expect(sure < 300, "\(sure) ms")
        // On a pause the audio model calls incomplete, a doubtful last word shortens the wait
        // only as far: half the maximum, not the sure words' short wait.
        let incomplete = try #require(try await silenceEndingTheTurn(transcript: "Could you check him?", wordConfidence: 0.33))
        #expect(incomplete >= check.doubtfulWordsSilenceMs && incomplete < check.doubtfulWordsSilenceMs + 100, "\(incomplete) ms")
    }

    @Test func wordsThatSayNothingLeaveTheMaximumSilence() async throws {
        let silence = try #require(try await silenceEndingTheTurn(transcript: "I'd like to book a flight"))
        #expect(silence >= 4_000 && silence < 4_100, "\(silence) ms")
    }
}

/// A judge that calls a thought unfinished when it stops on one word.
private struct WordJudge: TurnCompletionJudge {
    var unfinishedEnding: String
    func judge(_ transcript: String) async throws -> TurnCompletionVerdict {
        let unfinished = transcript.trimmingCharacters(in: .punctuationCharacters).hasSuffix(unfinishedEnding)
        return TurnCompletionVerdict(probability: unfinished ? 0.001 : 0.9, isComplete: !unfinished)
    }
}
