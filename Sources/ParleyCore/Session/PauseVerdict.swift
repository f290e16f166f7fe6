import Foundation

/// What a session does about a pause `semantic_vad` asked about, from the audio model's
/// verdict and, when the pause's early transcript was read, its words (`PauseWords`).
///
/// Both complete ends the turn there. Words that leave the thought unfinished ("…a flight to")
/// keep a pause the audio model calls complete open. Complete words alone ("…of Australia?")
/// shorten the wait; complete words ending on a word the recognizer doubts shorten it less
/// (`TurnDetector.wordsJudgedComplete(atMs:lastWordIsSure:)`).
///
/// ```swift
/// switch PauseVerdict(audioSaysComplete: probability >= threshold, words: words) {
/// case .endTurn: endTurn()
/// case .shortenWait(let lastWordIsSure): turns.wordsJudgedComplete(atMs: pauseMs, lastWordIsSure: lastWordIsSure)
/// case .keepWaiting: break
/// }
/// ```
enum PauseVerdict: Sendable, Hashable {
    /// The turn ends at the pause.
    case endTurn
    /// The turn ends sooner than its silence would end it: the words say it is complete, and
    /// the recognizer was or was not sure of their last word.
    case shortenWait(lastWordIsSure: Bool)
    /// The pause changes nothing.
    case keepWaiting

    /// The verdict on a pause the audio model calls complete or not; `words` is `nil` when the
    /// pause's words were not read.
    init(audioSaysComplete: Bool, words: PauseWords?) {
        let lastWordIsSure = words?.lastWordIsSure ?? true
        if audioSaysComplete {
            self = words?.sayComplete == false ? .keepWaiting : lastWordIsSure ? .endTurn : .shortenWait(lastWordIsSure: false)
        } else {
            self = words?.sayComplete == true ? .shortenWait(lastWordIsSure: lastWordIsSure) : .keepWaiting
        }
    }
}

/// What a pause's early transcript says about the thought, read as `semantic_vad` reads it
/// (`PauseTranscriptReading`: the marks, the text judge, the word rule).
struct PauseWords: Sendable, Hashable {
    /// The words of the pause's early transcript.
    var transcript: String
    /// Whether the words say the thought is complete.
    var sayComplete: Bool
    /// Whether the recognizer was sure of the last word; a doubtful one does not end a turn.
    var lastWordIsSure: Bool

    /// Reads the pause's early transcription once it arrives: for a pause the audio model
    /// calls complete, whether its words leave the thought unfinished; for one it calls
    /// incomplete, whether they positively say it is complete. Words heard in a language other
    /// than English are read by their marks alone (`PauseTranscriptReading.readMarks`).
    static func read(
        _ early: Task<Transcription, any Error>, audioSaysComplete: Bool, judge: (any TurnCompletionJudge)?
    ) async -> PauseWords {
        let transcription = try? await early.value
        let text = transcription?.text ?? ""
        let lastWordIsSure = PauseTranscriptReading.isSureOfLastWord(transcription)
        guard CallerLanguage.isEnglishOrUnknown(transcription?.language) else {
            let unfinished = PauseTranscriptReading.readMarks(text)
            return PauseWords(transcript: text, sayComplete: audioSaysComplete ? unfinished != true : unfinished == false, lastWordIsSure: lastWordIsSure)
        }
        let sayComplete = audioSaysComplete
            ? await !PauseTranscriptReading.isUnfinished(text, judge: judge)
            : await PauseTranscriptReading.saysComplete(text, judge: judge)
        return PauseWords(transcript: text, sayComplete: sayComplete, lastWordIsSure: lastWordIsSure)
    }
}
