import Foundation

/// How `semantic_vad` reads a pause's early transcript once the audio model has called the
/// pause complete: marks Whisper wrote settle it at once, a text judge (when the session has
/// one) reads the rest, and the word rule (`UnfinishedThought`) stands in for a judge that is
/// missing, late or failing.
public enum PauseTranscriptReading: Sendable, Hashable {
    /// The transcript settles it: the thought is `unfinished` or not.
    case settled(unfinished: Bool)
    /// Ask the text judge; `unfinishedByWords` is the word rule's answer, kept for a judge that
    /// is late or fails.
    case askJudge(unfinishedByWords: Bool)

    /// How long the session waits for the text judge before it keeps to the word rule.
    public static let judgeDeadline: Duration = .milliseconds(250)

    /// The confidence in a transcript's last word (`Transcription.lastWordConfidence`) below
    /// which its words do not decide that a thought is over. Measured with Whisper tiny.en on
    /// the turn corpus: the misheard last words of mid-thought pauses ("too" for "to", "him"
    /// for "if", "next" for "and") scored 0.31–0.53; the last words of complete questions
    /// mostly 0.7–1.0, a few misheard ones lower.
    public static let minimumLastWordConfidence: Float = 0.55

    /// Whether the recognizer was sure enough of `transcription`'s last word for its words to
    /// decide that a thought is over (a recognizer that does not say counts as sure).
    public static func isSureOfLastWord(_ transcription: Transcription?) -> Bool {
        (transcription?.lastWordConfidence ?? 1) >= minimumLastWordConfidence
    }

    /// Reads `transcript`; `hasJudge` says whether the session has a text judge.
    ///
    /// Trailing off ("…", a final comma or dash) leaves the thought open and a question or
    /// exclamation mark ends it, without asking anyone, unless the mark follows a word that
    /// needs more: Whisper puts a question mark on fragments ("How far is it from London to?")
    /// as well as on questions that end on a preposition ("Where are you from?"), and the
    /// judge tells them apart. An empty transcript is left to the audio model.
    public static func read(_ transcript: String, hasJudge: Bool) -> PauseTranscriptReading {
        let text = transcript.trimmingCharacters(in: .whitespacesAndNewlines)
        let byWords = UnfinishedThought.isUnfinished(text)
        guard hasJudge, let last = text.last, !UnfinishedThought.trailsOff(text) else { return .settled(unfinished: byWords) }
        if last == "?" || last == "!", !UnfinishedThought.endsOnWordThatNeedsMore(text) { return .settled(unfinished: false) }
        return .askJudge(unfinishedByWords: byWords)
    }

    /// Reads a transcript in a language other than English, where the text judge and the word
    /// rule (both English) step aside and only Whisper's marks speak: trailing off leaves the
    /// thought `unfinished` (true), a question or exclamation mark ends it (false), anything
    /// else says nothing (`nil`: the audio model decides).
    public static func readMarks(_ transcript: String) -> Bool? {
        let text = transcript.trimmingCharacters(in: .whitespacesAndNewlines)
        if UnfinishedThought.trailsOff(text) { return true }
        return text.last == "?" || text.last == "!" ? false : nil
    }
}

extension PauseTranscriptReading {
    /// Whether the thought in `transcript` is unfinished: settled by its marks, else by
    /// `judge` when it answers within `deadline`, else by the word rule.
    public static func isUnfinished(
        _ transcript: String, judge: (any TurnCompletionJudge)?, deadline: Duration = judgeDeadline
    ) async -> Bool {
        switch read(transcript, hasJudge: judge != nil) {
        case .settled(let unfinished):
            return unfinished
        case .askJudge(let unfinishedByWords):
            guard let judge, let verdict = await firstAnswer(of: judge, on: transcript, within: deadline) else { return unfinishedByWords }
            return !verdict.isComplete
        }
    }

    /// Whether the words of `transcript` positively say the thought is complete, for a pause
    /// the audio model found incomplete: Whisper ended it on a question or exclamation mark
    /// not after a word that needs more, or `judge` (when it answers within `deadline`) calls
    /// it complete. The word rule alone is not enough: "I'd like to book a flight" breaks none of it.
    public static func saysComplete(
        _ transcript: String, judge: (any TurnCompletionJudge)?, deadline: Duration = judgeDeadline
    ) async -> Bool {
        let text = transcript.trimmingCharacters(in: .whitespacesAndNewlines)
        switch read(text, hasJudge: judge != nil) {
        case .settled(let unfinished):
            return !unfinished && (text.last == "?" || text.last == "!") && !UnfinishedThought.endsOnWordThatNeedsMore(text)
        case .askJudge:
            guard let judge, let verdict = await firstAnswer(of: judge, on: text, within: deadline) else { return false }
            return verdict.isComplete
        }
    }

    /// The judge's verdict, or `nil` when it fails, has not answered within `deadline` or the
    /// calling task is cancelled (the question is then cancelled, and not waited for).
    private static func firstAnswer(
        of judge: any TurnCompletionJudge, on transcript: String, within deadline: Duration
    ) async -> TurnCompletionVerdict? {
        let answer = Handoff<TurnCompletionVerdict>()
        let question = Task { answer.give(try? await judge.judge(transcript)) }
        let timer = Task {
            try? await Task.sleep(for: deadline)
            answer.give(nil)
        }
        let verdict = await withTaskCancellationHandler {
            await withCheckedContinuation { answer.wait(with: $0) }
        } onCancel: {
            answer.give(nil)
        }
        question.cancel()
        timer.cancel()
        return verdict
    }
}
