import Foundation
import ParleyCore
import Testing
@testable import ParleyLocal

@Suite struct SileroVADTests {
    static let frameLength = 512

    /// The ten round-trip sentences at the nominal speech level of -26 dBFS (ITU-T P.56),
    /// separated by 1.2 s pauses, mixed with white noise whose power equals the power of the
    /// speech signal (0 dB SNR). A frame is speech when its clean signal is within 25 dB of the
    /// loudest frame; a non-speech frame counts towards false positives only when it is at least
    /// 300 ms from every speech frame. Decisions use the default threshold of 0.5.
    @Test(arguments: [UInt64(1), 2, 3])
    func separatesSpeechFromWhiteNoiseAtZeroDecibelSNR(seed: UInt64) async throws {
        let vad = try SileroVAD(modelPath: TestModels.locator.path(of: .sileroVAD))
        let mix = try await NoisySpeech.make(sentences: TestModels.sentences, frameLength: Self.frameLength, seed: seed)
        let decided = mix.frames.map { vad.speechProbability(of: $0) > 0.5 }
        let score = mix.score(decided)
        #expect(score.speechFrames > 500 && score.distantFrames > 200)
        #expect(score.recall >= 0.95, "recall \(score.recall)")
        #expect(score.falsePositiveRate <= 0.05, "false-positive rate \(score.falsePositiveRate)")
    }

    @Test func resetForgetsEarlierFramesAndBadFramesAreTolerated() async throws {
        let vad = try SileroVAD(modelPath: TestModels.locator.path(of: .sileroVAD))
        let speech = try await TestModels.speech("Hello there, how are you doing today?")
        let silence = [Float](repeating: 0, count: Self.frameLength)
        let fresh = vad.speechProbability(of: silence)
        for start in stride(from: 0, to: speech.count - Self.frameLength, by: Self.frameLength) {
            _ = vad.speechProbability(of: Array(speech[start..<start + Self.frameLength]))
        }
        vad.reset()
        #expect(vad.speechProbability(of: silence) == fresh)
        let odd = vad.speechProbability(of: [Float.nan, .infinity] + [Float](repeating: 0.1, count: 3_000))
        #expect((0...1).contains(odd))
    }

    @Test func missingModelNamesTheFileAndTheFix() {
        #expect {
            _ = try SileroVAD(modelPath: "/nonexistent/ggml-silero.bin")
        } throws: { error in
            "\(error)".contains("/nonexistent/ggml-silero.bin") && "\(error)".contains("scripts/setup")
        }
    }
}
