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

    /// Knocks on a door: `count` thuds 220 ms apart, each a damped 110 Hz resonance with a
    /// click of noise on top.
    public static func knock(count: Int = 2, seed: UInt64 = 3) -> [Float] {
        var noise = SeededNoise(seed: seed)
        var samples = [Float](repeating: 0, count: (count - 1) * sampleRate * 22 / 100 + sampleRate / 5)
        for knock in 0..<count {
            let start = knock * sampleRate * 22 / 100
            for index in 0..<(sampleRate / 5) {
                let t = Float(index) / Float(sampleRate)
                samples[start + index] += 0.5 * expf(-t / 0.03) * (sinf(2 * .pi * 110 * t) + 0.5 * noise.uniform())
            }
        }
        return samples
    }

    /// Paper rustling or a bag moved: `milliseconds` of band-limited noise swelling and fading.
    public static func rustle(milliseconds: Int = 600, seed: UInt64 = 7) -> [Float] {
        var noise = SeededNoise(seed: seed)
        var low: Float = 0
        var previous: Float = 0
        let count = milliseconds * sampleRate / 1000
        return (0..<count).map { index in
            let white = noise.uniform()
            low += 0.5 * (white - low)
            // Difference of the low-passed noise: a band around 2–4 kHz.
            defer { previous = low }
            let envelope = sinf(.pi * Float(index) / Float(count))
            return 0.5 * envelope * (low - previous)
        }
    }

    /// Typing: `count` sharp clicks 90–150 ms apart.
    public static func clicks(count: Int = 6, seed: UInt64 = 9) -> [Float] {
        var noise = SeededNoise(seed: seed)
        var samples: [Float] = []
        for _ in 0..<count {
            let gap = sampleRate * (90 + Int(noise.next() % 60)) / 1000
            samples += (0..<gap).map { index in index < 160 ? 0.7 * noise.uniform() * expf(-Float(index) / 30) : 0 }
        }
        return samples
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
