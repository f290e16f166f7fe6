import Foundation

/// Judges from a pause's words whether the speaker's thought is complete: the text half of
/// `semantic_vad`, asked when the audio model calls a pause complete and the transcript has
/// neither a question mark nor a trailing-off mark to go by.
///
/// A language model's judgement takes tens of milliseconds; the session waits for it only up
/// to `PauseTranscriptReading.judgeDeadline` and keeps to the word rule (`UnfinishedThought`)
/// when it is late or fails.
public protocol TurnCompletionJudge: Sendable {
    /// Reads `transcript`, what the person has said so far, and says whether a thought ends there.
    /// - Throws: when the judge cannot answer (the session then keeps to the word rule).
    func judge(_ transcript: String) async throws -> TurnCompletionVerdict
}

/// A `TurnCompletionJudge`'s answer.
public struct TurnCompletionVerdict: Sendable, Hashable {
    /// The judge's probability (0…1) that the thought ends where the transcript ends.
    public var probability: Float
    /// Whether the thought is complete (the probability against the judge's own threshold).
    public var isComplete: Bool

    /// Creates a verdict.
    public init(probability: Float, isComplete: Bool) {
        self.probability = probability
        self.isComplete = isComplete
    }
}
