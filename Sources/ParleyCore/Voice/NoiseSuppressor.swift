import Foundation

/// The kind of input noise reduction a session asks for (OpenAI's `noise_reduction.type`).
public enum NoiseReduction: String, Sendable, Hashable, Codable, CaseIterable {
    /// A microphone close to the mouth (headset, phone held to the ear): milder suppression.
    case nearField = "near_field"
    /// A microphone across the room (laptop, conference speakerphone): stronger suppression.
    case farField = "far_field"
}

/// Takes steady background noise out of input audio before the VAD and the recognizer hear it.
///
/// Works on frames of a fixed length given when it is made, in place, and keeps state between
/// frames (its estimate of the noise), so one suppressor serves one audio stream.
public protocol NoiseSuppressor: Sendable {
    /// Suppresses noise in one frame of mono samples in [-1, 1].
    mutating func suppress(_ frame: inout [Float])
}
