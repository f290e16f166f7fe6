import Testing
@testable import ParleyCore

/// What `semantic_vad` does about a pause, from the audio model's verdict and the pause's words.
@Suite struct PauseVerdictTests {
    private static func words(complete: Bool, sure: Bool = true) -> PauseWords {
        PauseWords(transcript: "What is the capital of Australia?", sayComplete: complete, lastWordIsSure: sure)
    }

    @Test(arguments: [
        // audio complete, the words (nil: not read) → verdict
        (true, nil, PauseVerdict.endTurn),
        (true, words(complete: true), .endTurn),
        (true, words(complete: true, sure: false), .shortenWait(lastWordIsSure: false)),
        (true, words(complete: false), .keepWaiting),
        (true, words(complete: false, sure: false), .keepWaiting),
        (false, nil, .keepWaiting),
        (false, words(complete: true), .shortenWait(lastWordIsSure: true)),
        (false, words(complete: true, sure: false), .shortenWait(lastWordIsSure: false)),
        (false, words(complete: false), .keepWaiting),
    ] as [(Bool, PauseWords?, PauseVerdict)])
    func verdict(audioSaysComplete: Bool, words: PauseWords?, expected: PauseVerdict) {
        #expect(PauseVerdict(audioSaysComplete: audioSaysComplete, words: words) == expected)
    }

    @Test func thePausesWordsAreReadOnceItsEarlyTranscriptArrives() async {
        let early = Task<Transcription, any Error> { Transcription(text: "I'd like a flight to", audioDuration: 1, processingDuration: 0) }
        let words = await PauseWords.read(early, audioSaysComplete: true, judge: nil)
        #expect(words == PauseWords(transcript: "I'd like a flight to", sayComplete: false, lastWordIsSure: true))
    }

    /// In another language the English text judge and word rule step aside: "a" ends no
    /// Spanish thought's words by rule, and the judge (which would call everything unfinished)
    /// is not asked; only Whisper's marks speak.
    @Test(arguments: [
        ("Quiero un vuelo a", true, true),
        ("Quiero un vuelo a", false, false),
        ("Quiero un vuelo a Madrid,", true, false),
        ("¿Cuándo sale el tren a?", false, true),
    ])
    func wordsInAnotherLanguageAreReadByTheirMarksAlone(text: String, audioSaysComplete: Bool, sayComplete: Bool) async {
        let early = Task<Transcription, any Error> { Transcription(text: text, audioDuration: 1, processingDuration: 0, language: "es") }
        let words = await PauseWords.read(early, audioSaysComplete: audioSaysComplete, judge: UnfinishedJudge())
        #expect(words == PauseWords(transcript: text, sayComplete: sayComplete, lastWordIsSure: true))
    }

    @Test func aFailedEarlyTranscriptionHasNoWords() async {
        let early = Task<Transcription, any Error> { throw CancellationError() }
        let words = await PauseWords.read(early, audioSaysComplete: false, judge: nil)
        #expect(words.transcript.isEmpty && !words.sayComplete)
    }
}

/// A text judge that calls every thought unfinished.
private struct UnfinishedJudge: TurnCompletionJudge {
    func judge(_ transcript: String) async throws -> TurnCompletionVerdict {
        TurnCompletionVerdict(probability: 0.001, isComplete: false)
    }
}
