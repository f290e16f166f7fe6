import Foundation
import ParleyTesting
import Testing
@testable import ParleyCore

/// The voicing test the interruption policy uses to tell speech from noise, on 32 ms frames.
@Suite struct VoicingTests {
    static func frames(_ samples: [Float]) -> [[Float]] {
        stride(from: 0, to: samples.count - 511, by: 512).map { Array(samples[$0..<$0 + 512]) }
    }

    /// A vowel-like tone: a 140 Hz pulse train's first harmonics.
    static func vowel(milliseconds: Int) -> [Float] {
        (0..<(16 * milliseconds)).map { index in
            let t = Float(index) / 16_000
            return (1...6).reduce(Float(0)) { $0 + 0.1 / Float($1) * sinf(2 * .pi * 140 * Float($1) * t) }
        }
    }

    @Test func aPitchedSoundIsVoicedAndStaysSoUnderNoise() {
        let vowel = Self.vowel(milliseconds: 320)
        #expect(Self.frames(vowel).allSatisfy { Voicing.isVoiced($0, sampleRate: 16_000) })
        // White noise at 5 dB below the vowel's power.
        let noise = SyntheticSounds.whiteNoise(milliseconds: 320, level: 0.1 * 0.56 * 0.75)
        let noisy = zip(vowel, noise).map { $0 + $1 }
        #expect(Self.frames(noisy).allSatisfy { Voicing.isVoiced($0, sampleRate: 16_000) })
    }

    static let noises: [String: [Float]] = [
        "cough": SyntheticSounds.cough(), "white noise": SyntheticSounds.whiteNoise(milliseconds: 500),
        "rustle": SyntheticSounds.rustle(), "typing": SyntheticSounds.clicks(), "silence": [Float](repeating: 0, count: 8_000),
    ]

    @Test(arguments: ["cough", "white noise", "rustle", "typing", "silence"])
    func noiseIsNotVoiced(name: String) throws {
        let sound = try #require(Self.noises[name])
        let voiced = Self.frames(sound).filter { Voicing.isVoiced($0, sampleRate: 16_000) }.count
        #expect(voiced == 0, "\(name): \(voiced) voiced frames")
    }
}
