import Foundation
import ParleyCore
import ParleyTesting
import Testing

@Suite struct UnfinishedThoughtTests {
    @Test(arguments: [
        "I'd like to book a flight to", "Add eggs, butter and", "Set an alarm for.", "Can you find me a recipe for",
        "I was thinking, um", "So the thing is...", "Well, I think that the", "Move it to the living room,",
    ])
    func wordsThatNeedMoreLeaveTheThoughtOpen(transcript: String) {
        #expect(UnfinishedThought.isUnfinished(transcript))
    }

    @Test(arguments: [
        "What time is it in Tokyo?", "Where are you from?", "Book a flight to Paris.", "Turn it on!", "I know that.",
        "Yes, I can.", "", "   ", "Привет, как дела",
    ])
    func finishedThoughtsAndOtherLanguagesAreLeftToTheAudio(transcript: String) {
        #expect(!UnfinishedThought.isUnfinished(transcript))
    }

    /// The audio model calls every pause complete; the first pause's transcript stops on "to".
    @Test func aPauseOnAWordThatNeedsMoreDoesNotEndTheTurnThoughTheAudioModelSaysItIsComplete() async throws {
        let (session, recorder) = try await speakAThoughtWithAPause(
            transcripts: ["I'd like to book a flight to", "I'd like to book a flight to Paris on Monday."]
        )
        let verdicts = await recorder.events.compactMap { event -> (Bool, String?)? in
            if case .turnJudged(_, _, _, let endsTurn, let transcript) = event { (endsTurn, transcript) } else { nil }
        }
        #expect(verdicts.map(\.0) == [false, true], "\(verdicts)")
        #expect(verdicts.first?.1 == "I'd like to book a flight to")
        #expect(await recorder.count { if case .speechStopped = $0 { true } else { false } } == 1)
        #expect(await session.ledger.messages.first == .user("I'd like to book a flight to Paris on Monday."))
    }
}

