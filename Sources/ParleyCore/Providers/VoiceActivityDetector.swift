import Foundation

/// Estimates, frame by frame, how likely it is that a frame of audio contains speech.
///
/// Detectors keep state between frames (noise floors, recurrent networks), so each session
/// owns its own instance.
public protocol VoiceActivityDetector: Sendable {
    /// The sample rate frames must have (mono Float32).
    var sampleRate: Int { get }
    /// The number of samples in one frame.
    var frameLength: Int { get }
    /// Returns the probability (0…1) that `frame` contains speech. `frame.count == frameLength`.
    mutating func speechProbability(of frame: [Float]) -> Float
    /// Forgets everything learnt from earlier frames.
    mutating func reset()
}
