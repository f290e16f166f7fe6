import Foundation

/// Sounds that are not speech, made at test time at 16 kHz, reproducible from a seed.
public enum SyntheticSounds {
    /// The sample rate of every sound here.
    public static let sampleRate = 16_000

    /// A cough: a 250 ms burst of low-passed noise with a sharp attack and a fast decay.
    public static func cough(seed: UInt64 = 11) -> [Float] {
        var noise = SeededNoise(seed: seed)
        var smoothed: Float = 0
        return (0..<(sampleRate / 4)).map { index in
            let t = Float(index) / Float(sampleRate)
            smoothed += 0.35 * (noise.uniform() - smoothed)
            let envelope = min(1, t / 0.01) * expf(-t / 0.07)
            return 0.6 * smoothed * envelope
        }
    }

    /// Gaussian white noise with an RMS of `level`.
    public static func whiteNoise(milliseconds: Int, level: Float = 0.1, seed: UInt64 = 5) -> [Float] {
        var noise = SeededNoise(seed: seed)
        return (0..<(milliseconds * sampleRate / 1000)).map { _ in level * noise.gaussian() }
    }
}

/// A seeded SplitMix64 generator with uniform and Gaussian samples.
public struct SeededNoise: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator; the same seed gives the same samples.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A sample uniform in -1…1.
    public mutating func uniform() -> Float { Float(next() >> 40) * 0x1p-23 - 1 }

    /// A standard normal sample (Box–Muller).
    public mutating func gaussian() -> Float {
        let u1 = Float(next() >> 40 | 1) * 0x1p-24
        let angle = 2 * Float.pi * Float(next() >> 40) * 0x1p-24
        return (-2 * log(u1)).squareRoot() * cos(angle)
    }
}
