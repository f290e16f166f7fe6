import Foundation

/// Judges from the audio whether a person has finished what they meant to say: the model
/// behind `semantic_vad`, asked each time the voice pauses.
///
/// A call takes about a tenth of a second of CPU; a session makes them off its own executor.
public protocol TurnCompletionModel: Sendable {
    /// The sample rate of the audio the model takes.
    var sampleRate: Int { get }

    /// The probability (0…1) that the turn in `samples` (mono, at `sampleRate`, ending with
    /// the pause being judged) is complete.
    func completionProbability(of samples: [Float]) -> Float
}
