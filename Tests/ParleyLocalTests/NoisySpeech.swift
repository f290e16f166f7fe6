import Foundation

/// Flite speech with pauses, mixed with seeded white noise, cut into frames, with per-frame
/// speech labels from the clean signal.
struct NoisySpeech {
    /// The noisy frames, in order.
    var frames: [[Float]]
    /// Whether the clean frame holds speech (within 25 dB of the loudest frame).
    var isSpeech: [Bool]
    /// Frames that are at least `guardDistance` frames from every speech frame.
    var distantFromSpeech: [Bool]

    /// Recall over speech frames and false-positive rate over distant non-speech frames.
    struct Score {
        var recall: Double
        var falsePositiveRate: Double
        var speechFrames: Int
        var distantFrames: Int
    }

    /// Builds the mix: `sentences` spoken at -26 dBFS, 1.2 s apart, white noise of the speech
    /// signal's power (0 dB SNR) added everywhere.
    static func make(sentences: [String], frameLength: Int, seed: UInt64, pauseSeconds: Double = 1.2) async throws -> NoisySpeech {
        let pause = [Float](repeating: 0, count: Int(pauseSeconds * 16_000))
        var clean = pause
        var speech: [Float] = []
        for sentence in sentences {
            let audio = try await TestModels.speech(sentence)
            speech += audio
            clean += audio + pause
        }
        clean += [Float](repeating: 0, count: (frameLength - clean.count % frameLength) % frameLength)
        let frameCount = clean.count / frameLength
        let rawEnergy = (0..<frameCount).map { meanSquare(clean[$0 * frameLength..<($0 + 1) * frameLength]) }
        let loudest = rawEnergy.max() ?? 0
        let isSpeech = rawEnergy.map { $0 > 0 && 10 * log10($0 / loudest) > -25 }
        let activePower = zip(rawEnergy, isSpeech).filter(\.1).map(\.0).reduce(0, +) / Double(max(1, isSpeech.filter { $0 }.count))
        let gain = (pow(10, -26.0 / 10) / activePower).squareRoot()
        let noiseDeviation = (meanSquare(speech[...]) * gain * gain).squareRoot()

        var noise = GaussianNoise(seed: seed)
        let noisy = clean.map { Float(Double($0) * gain + noise.next() * noiseDeviation) }
        let guardDistance = Int((0.3 * 16_000 / Double(frameLength)).rounded(.up))
        let speechIndices = isSpeech.indices.filter { isSpeech[$0] }
        let distant = isSpeech.indices.map { index in !speechIndices.contains { abs($0 - index) < guardDistance } }
        return NoisySpeech(
            frames: (0..<frameCount).map { Array(noisy[$0 * frameLength..<($0 + 1) * frameLength]) },
            isSpeech: isSpeech,
            distantFromSpeech: distant
        )
    }

    /// Scores per-frame speech decisions against the labels.
    func score(_ decided: [Bool]) -> Score {
        let speech = isSpeech.indices.filter { isSpeech[$0] }
        let distant = distantFromSpeech.indices.filter { distantFromSpeech[$0] }
        return Score(
            recall: Double(speech.filter { decided[$0] }.count) / Double(max(1, speech.count)),
            falsePositiveRate: Double(distant.filter { decided[$0] }.count) / Double(max(1, distant.count)),
            speechFrames: speech.count,
            distantFrames: distant.count
        )
    }

    private static func meanSquare(_ samples: ArraySlice<Float>) -> Double {
        samples.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(1, samples.count))
    }
}

/// Standard normal samples from a seeded SplitMix64 generator (Box–Muller).
struct GaussianNoise {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> Double {
        let u1 = max(uniform(), .leastNonzeroMagnitude)
        let u2 = uniform()
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }

    private mutating func uniform() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 53)
    }
}
