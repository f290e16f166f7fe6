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

/// A judge that calls a thought unfinished when it stops on one word.
private struct WordJudge: TurnCompletionJudge {
    var unfinishedEnding: String
    func judge(_ transcript: String) async throws -> TurnCompletionVerdict {
        let unfinished = transcript.trimmingCharacters(in: .punctuationCharacters).hasSuffix(unfinishedEnding)
        return TurnCompletionVerdict(probability: unfinished ? 0.001 : 0.9, isComplete: !unfinished)
    }
}
