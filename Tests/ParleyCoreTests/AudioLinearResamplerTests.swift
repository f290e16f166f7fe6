import Foundation
import Testing
@testable import ParleyCore

@Suite struct AudioLinearResamplerTests {
    @Test(arguments: [(24_000, 16_000), (16_000, 24_000), (22_050, 16_000), (16_000, 48_000), (48_000, 24_000)])
    func chunkingDoesNotChangeTheOutput(from: Int, to: Int) throws {
        let input = TestSignal.tone(frequency: 1_000, amplitude: 0.5, count: from, sampleRate: from)
        var whole = try LinearResampler(from: from, to: to)
        let expected = whole.process(input) + whole.flush()
        #expect(abs(expected.count - to) <= 1)
        var chunked = try LinearResampler(from: from, to: to)
        let output = TestSignal.resampledInRandomChunks(input, with: &chunked, seed: UInt64(from + to))
        #expect(output == expected)
    }

    @Test func keepsLevelAndSamplesExactlyOnTheGrid() throws {
        var resampler = try LinearResampler(from: 24_000, to: 16_000)
        let input = TestSignal.tone(frequency: 1_000, amplitude: 0.5, count: 24_000, sampleRate: 24_000)
        let output = resampler.process(input)
        // Every third input sample lands exactly on an output sample.
        #expect(output[2] == input[3])
        let levelDifference = 20 * log10(TestSignal.rms(output[100..<15_900]) / TestSignal.rms(input[150..<23_850]))
        #expect(abs(levelDifference) < 0.1)
    }

    @Test func int16ConvenienceAndRateValidation() throws {
        var resampler = try LinearResampler(from: 8_000, to: 16_000)
        #expect(resampler.process([0, 1_000, 2_000] as [Int16]) == [0, 500, 1_000, 1_500, 2_000])
        #expect(resampler.flushPCM16() == [2_000])
        #expect(resampler.outputCount(forInputCount: 160) == 320)
        #expect(throws: AudioError.invalidFormat(AudioFormat(sampleRate: 0))) { try LinearResampler(from: 0, to: 16_000) }
    }
}
