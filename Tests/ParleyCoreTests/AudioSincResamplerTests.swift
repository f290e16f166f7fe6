import Foundation
import Testing
@testable import ParleyCore

@Suite struct AudioSincResamplerTests {
    @Test(arguments: [(24_000, 16_000), (16_000, 24_000), (22_050, 16_000), (44_100, 16_000), (48_000, 16_000), (8_000, 16_000)])
    func chunkingDoesNotChangeTheOutputAndTheLevelIsKept(from: Int, to: Int) throws {
        let input = TestSignal.tone(frequency: 1_000, amplitude: 0.5, count: from, sampleRate: from)
        var whole = try SincResampler(from: from, to: to)
        let expected = whole.process(input) + whole.flush()
        #expect(expected.count == to)
        var chunked = try SincResampler(from: from, to: to)
        let output = TestSignal.resampledInRandomChunks(input, with: &chunked, seed: UInt64(from + to))
        #expect(output == expected)
        let margin = to / 50
        let levelDifference = 20 * log10(TestSignal.rms(output[margin..<(to - margin)]) / TestSignal.rms(input[(from / 50)..<(from - from / 50)]))
        #expect(abs(levelDifference) < 0.1)
    }

    /// Each 20 ms chunk at 24 kHz gives its 20 ms at 16 kHz less than a millisecond later:
    /// nothing is held back for a block, which would delay the end of every turn.
    @Test func outputFollowsEachChunkWithinAMillisecond() throws {
        var resampler = try SincResampler(from: 24_000, to: 16_000)
        var produced = 0
        for chunk in 1...50 {
            produced += resampler.process([Float](repeating: 0.1, count: 480)).count
            #expect(chunk * 320 - produced <= 16, "chunk \(chunk): \(chunk * 320 - produced) samples held back")
        }
    }

    @Test func anImpulseComesOutAtTheSameTime() throws {
        var resampler = try SincResampler(from: 24_000, to: 16_000)
        var input = [Float](repeating: 0, count: 2_400)
        input[300] = 1  // 12.5 ms, which is output sample 200 at 16 kHz
        let output = resampler.process(input) + resampler.flush()
        let peak = output.indices.max { abs(output[$0]) < abs(output[$1]) }
        #expect(peak == 200)
    }

    @Test func toneAboveTheNewNyquistFrequencyIsFilteredOut() throws {
        // 10 kHz at 24 kHz would alias to 6 kHz at 16 kHz.
        var resampler = try SincResampler(from: 24_000, to: 16_000)
        let input = TestSignal.tone(frequency: 10_000, amplitude: 0.5, count: 24_000, sampleRate: 24_000)
        let output = resampler.process(input)
        let attenuation = 20 * log10(TestSignal.rms(output[1_000..<15_000]) / TestSignal.rms(input))
        #expect(attenuation < -50)
    }

    @Test func rateValidationAndInt16() throws {
        #expect(throws: AudioError.invalidFormat(AudioFormat(sampleRate: 0))) { try SincResampler(from: 0, to: 16_000) }
        #expect(throws: AudioError.invalidFormat(AudioFormat(sampleRate: -8_000))) { try SincResampler(from: 16_000, to: -8_000) }
        var resampler = try SincResampler(from: 16_000, to: 16_000)
        let samples: [Int16] = [0, 1_000, -2_000, 32_767, -32_768]
        #expect(resampler.process(samples) + resampler.flushPCM16() == samples)
    }
}

extension AudioSincResamplerTests {
    /// An odd rate pair (44,101 Hz has no common factor with 16 kHz) gets a bounded table and
    /// still keeps the level.
    @Test func unusualRatesStayBoundedAndAccurate() throws {
        var resampler = try SincResampler(from: 44_101, to: 16_000)
        let input = TestSignal.tone(frequency: 1_000, amplitude: 0.5, count: 44_101, sampleRate: 44_101)
        let output = resampler.process(input) + resampler.flush()
        #expect(abs(output.count - 16_000) <= 1)
        let levelDifference = 20 * log10(TestSignal.rms(output[500..<15_500]) / TestSignal.rms(input[1_400..<42_700]))
        #expect(abs(levelDifference) < 0.1)
    }
}
