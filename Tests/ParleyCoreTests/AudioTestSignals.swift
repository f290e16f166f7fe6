import Foundation
import ParleyCore

/// A small, fast, seeded random number generator (SplitMix64) so signal tests are deterministic.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The second value of the last Box–Muller pair, not yet returned.
    private var spare: Float?

    /// A standard normal sample (Box–Muller, two per pair of uniforms).
    mutating func gaussian() -> Float {
        if let spare {
            self.spare = nil
            return spare
        }
        let u1 = Float(next() >> 40 | 1) * 0x1p-24
        let angle = 2 * Float.pi * Float(next() >> 40) * 0x1p-24
        let radius = (-2 * log(u1)).squareRoot()
        spare = radius * sin(angle)
        return radius * cos(angle)
    }
}

/// Synthetic test signals.
enum TestSignal {
    /// `input` through `resampler` in chunks of 1 to 700 samples (seeded), then its flush.
    static func resampledInRandomChunks(_ input: [Float], with resampler: inout some Resampler, seed: UInt64) -> [Float] {
        var generator = SeededGenerator(seed: seed)
        var output: [Float] = []
        var index = 0
        while index < input.count {
            let end = min(index + Int.random(in: 1...700, using: &generator), input.count)
            output += resampler.process(Array(input[index..<end]))
            index = end
        }
        return output + resampler.flush()
    }

    /// A sine tone.
    static func tone(frequency: Double, amplitude: Float, count: Int, sampleRate: Int, phase: Double = 0) -> [Float] {
        (0..<count).map { amplitude * Float(sin(2 * .pi * frequency * Double($0) / Double(sampleRate) + phase)) }
    }

    /// White Gaussian noise with the given RMS.
    static func whiteNoise(rms: Float, count: Int, using generator: inout SeededGenerator) -> [Float] {
        (0..<count).map { _ in rms * generator.gaussian() }
    }

    /// Noise shaped like speech: low-passed around 1 kHz and modulated at a syllable rate of
    /// 4 Hz, normalised to unit RMS.
    static func speechLikeNoise(count: Int, sampleRate: Int, using generator: inout SeededGenerator) -> [Float] {
        let pole = Float(exp(-2 * Double.pi * 1_000 / Double(sampleRate)))
        var state: Float = 0
        let shaped = (0..<count).map { index -> Float in
            state = (1 - pole) * generator.gaussian() + pole * state
            let envelope = 0.65 + 0.35 * Float(sin(2 * .pi * 4 * Double(index) / Double(sampleRate)))
            return state * envelope
        }
        return normalised(shaped, rms: 1)
    }

    /// `samples` scaled to the given RMS.
    static func normalised(_ samples: [Float], rms: Float) -> [Float] {
        let current = (samples.reduce(0) { $0 + $1 * $1 } / Float(max(samples.count, 1))).squareRoot()
        guard current > 0 else { return samples }
        return samples.map { $0 * rms / current }
    }

    /// RMS of `samples`.
    static func rms(_ samples: some Collection<Float>) -> Float {
        (samples.reduce(0) { $0 + $1 * $1 } / Float(max(samples.count, 1))).squareRoot()
    }
}

/// A test scene: noise everywhere with signal bursts at known places.
struct BurstScene {
    /// The mixed samples.
    var samples: [Float]
    /// The signal alone, without the noise.
    var clean: [Float]
    /// RMS of the noise.
    var noiseRMS: Float
    /// Sample ranges holding a burst.
    var bursts: [Range<Int>]
    /// Sample rate.
    var sampleRate: Int

    /// Builds `burstCount` bursts of `burstMs` separated by `gapMs`, after `leadMs` of noise,
    /// at `snrDB` over noise of `noiseRMS`.
    static func make(
        burst: (Int, inout SeededGenerator) -> [Float],
        snrDB: Float,
        noiseRMS: Float = 0.01,
        leadMs: Int = 1_000,
        burstMs: Int = 800,
        gapMs: Int = 1_200,
        burstCount: Int = 3,
        sampleRate: Int = 16_000,
        seed: UInt64 = 1
    ) -> BurstScene {
        var generator = SeededGenerator(seed: seed)
        let perMs = sampleRate / 1000
        let total = (leadMs + burstCount * (burstMs + gapMs)) * perMs
        var samples = TestSignal.whiteNoise(rms: noiseRMS, count: total, using: &generator)
        var clean = [Float](repeating: 0, count: total)
        var bursts: [Range<Int>] = []
        let signalRMS = noiseRMS * Float(pow(10, Double(snrDB) / 20))
        for index in 0..<burstCount {
            let start = (leadMs + index * (burstMs + gapMs)) * perMs
            let range = start..<(start + burstMs * perMs)
            let signal = TestSignal.normalised(burst(range.count, &generator), rms: signalRMS)
            for (offset, value) in signal.enumerated() {
                samples[range.lowerBound + offset] += value
                clean[range.lowerBound + offset] = value
            }
            bursts.append(range)
        }
        return BurstScene(samples: samples, clean: clean, noiseRMS: noiseRMS, bursts: bursts, sampleRate: sampleRate)
    }

    /// The signal-to-noise ratio of the samples in `range`, in dB.
    func localSNR(_ range: Range<Int>) -> Float {
        20 * log10(max(TestSignal.rms(clean[range]), 1e-9) / noiseRMS)
    }

    /// Consecutive frames of `length` samples with their start sample.
    func frames(length: Int) -> [(start: Int, samples: [Float])] {
        stride(from: 0, through: samples.count - length, by: length).map { ($0, Array(samples[$0..<($0 + length)])) }
    }
}
