import Foundation

/// Takes the session's own output out of its input, for clients that play the agent's voice
/// through a speaker without cancelling its echo themselves (telephones, plain WebSocket clients).
///
/// Works on frames of a fixed length given when it is made, learning the path from speaker to
/// microphone as it goes, so one canceller serves one session.
public protocol EchoCanceller: Sendable {
    /// Removes from `frame` (mono samples in [-1, 1]) the echo of `played`: what the session's
    /// output was playing over the same stretch of time, at the same rate and length.
    mutating func cancel(_ frame: inout [Float], played: [Float])
}
