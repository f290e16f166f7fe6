import Foundation

/// A simple echo gate for speakerphone callers: while the agent's audio is playing on the
/// call, caller audio quieter than `thresholdDBFS` (the agent's own voice coming back through
/// the phone's loudspeaker, after the network's echo cancellers) is replaced by silence, so it
/// neither starts a turn nor interrupts the agent. Louder speech passes unchanged, and so does
/// everything while the agent is silent.
struct TwilioEchoGate: Sendable, Hashable {
    /// The level, in dBFS (RMS of a chunk), caller audio needs while the agent speaks.
    var thresholdDBFS: Float = -40

    /// `samples` as the session should hear them.
    func pass(_ samples: [Int16], agentPlaying: Bool) -> [Int16] {
        guard agentPlaying, !samples.isEmpty, Self.levelDBFS(samples) < thresholdDBFS else { return samples }
        return [Int16](repeating: 0, count: samples.count)
    }

    /// The RMS level of `samples` in dBFS (−∞ for digital silence).
    static func levelDBFS(_ samples: [Int16]) -> Float {
        let energy = samples.reduce(Float(0)) { sum, sample in
            let value = Float(sample) / 32_768
            return sum + value * value
        }
        return 10 * log10(energy / Float(samples.count))
    }
}
