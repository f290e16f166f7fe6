import Foundation
import ParleyCore
import Testing
@testable import ParleyLocal

/// A seeded SplitMix64 generator, for reproducible chunk sizes.
private struct ChunkSizes: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A sine tone.
private func tone(_ frequency: Double, amplitude: Float, seconds: Double, sampleRate: Int) -> [Float] {
    (0..<Int(seconds * Double(sampleRate))).map {
        amplitude * Float(sin(2 * .pi * frequency * Double($0) / Double(sampleRate)))
    }
}

/// Resamples `input` in random chunks of 1…`maximumChunk` samples, then flushes.
private func resampleInChunks(_ input: [Float], with resampler: inout some Resampler, seed: UInt64, maximumChunk: Int = 900) -> [Float] {
    var sizes = ChunkSizes(state: seed)
    var output: [Float] = []
    var index = 0
    while index < input.count {
        let end = min(index + Int.random(in: 1...maximumChunk, using: &sizes), input.count)
        output += resampler.process(Array(input[index..<end]))
        index = end
    }
    return output + resampler.flush()
}

/// The frequency of a clean tone from its rising zero crossings, interpolated between samples.
private func measuredFrequency(_ samples: ArraySlice<Float>, sampleRate: Int) -> Double {
    var crossings: [Double] = []
    for index in samples.indices.dropLast() where samples[index] < 0 && samples[index + 1] >= 0 {
        let fraction = Double(-samples[index] / (samples[index + 1] - samples[index]))
        crossings.append(Double(index) + fraction)
    }
    guard let first = crossings.first, let last = crossings.last, crossings.count > 1 else { return 0 }
    return Double(crossings.count - 1) * Double(sampleRate) / (last - first)
}

private func rms(_ samples: ArraySlice<Float>) -> Float {
    (samples.reduce(0) { $0 + $1 * $1 } / Float(max(samples.count, 1))).squareRoot()
}

private let rates = [16_000, 22_050, 24_000, 48_000]
private let ratePairs = rates.flatMap { from in rates.filter { $0 != from }.map { (from, $0) } }

@Suite struct ResamplerTests {
    @Test(arguments: ratePairs)
    func soxrKeepsFrequencyLevelAndTimingOfATone(from: Int, to: Int) throws {
        let input = tone(1_000, amplitude: 0.5, seconds: 0.5, sampleRate: from)
        var resampler = try SoxrResampler(from: from, to: to)
        let output = resampleInChunks(input, with: &resampler, seed: UInt64(from * 7 + to))
        #expect(abs(output.count - to / 2) <= 2, "\(output.count) samples for half a second at \(to) Hz")
        let steady = output[(to / 20)..<(output.count - to / 20)]
        #expect(abs(measuredFrequency(steady, sampleRate: to) - 1_000) < 0.01)
        let levelChange = 20 * log10(rms(steady) / rms(input[(from / 20)..<(input.count - from / 20)]))
        #expect(abs(levelChange) < 0.1, "level changed by \(levelChange) dB")
        // Time-aligned: the output is the same tone sampled at the new rate, with no delay.
        let ideal = tone(1_000, amplitude: 0.5, seconds: 0.5, sampleRate: to)
        let worstError = steady.indices.map { abs(output[$0] - ideal[$0]) }.max() ?? 1
        #expect(worstError < 1e-3)
    }

    @Test(arguments: ratePairs)
    func soxrChunkBoundariesLeaveNoDiscontinuity(from: Int, to: Int) throws {
        let input = tone(1_000, amplitude: 0.5, seconds: 0.5, sampleRate: from)
        let whole = try SoxrResampler(from: from, to: to)
        let reference = whole.process(input) + whole.flush()
        var chunked = try SoxrResampler(from: from, to: to)
        let output = resampleInChunks(input, with: &chunked, seed: UInt64(from + to), maximumChunk: 50)
        #expect(output.count == reference.count)
        #expect(zip(output, reference).map { abs($0 - $1) }.max() ?? 1 < 1e-5)
        // No step larger than the tone's own steepest slope allows (away from the tone's
        // abrupt start and end, where any band-limited resampler rings).
        let steady = output[(to / 50)..<(output.count - to / 50)]
        let largestStep = zip(steady.dropFirst(), steady).map { abs($0 - $1) }.max() ?? 0
        let steepest = Float(2 * Double.pi * 1_000 / Double(to)) * 0.5
        #expect(largestStep <= steepest * 1.01)
    }

    @Test func flushEndsTheStreamAndStartsAFreshOne() throws {
        let input = tone(440, amplitude: 0.3, seconds: 0.1, sampleRate: 24_000)
        let resampler = try SoxrResampler(from: 24_000, to: 16_000)
        let first = resampler.process(input) + resampler.flush()
        let second = resampler.process(input) + resampler.flush()
        #expect(first == second)
        #expect(first.count == 1_600)
        #expect(resampler.flush().isEmpty)
    }

    @Test func int16StreamsRoundAndClip() throws {
        var resampler = try SoxrResampler(from: 16_000, to: 24_000)
        let loud = tone(500, amplitude: 1, seconds: 0.1, sampleRate: 16_000).map { SampleConversion.pcm16($0) }
        let output = resampler.process(loud) + resampler.flushPCM16()
        #expect(output.count == 2_400)
        let peak = output.map { abs(Int($0)) }.max() ?? 0
        #expect(peak > 32_000)
    }

    @Test func everyQualityWorksAndSilenceStaysSilent() throws {
        for quality in [SoxrResampler.Quality.low, .medium, .high, .veryHigh] {
            let resampler = try SoxrResampler(from: 48_000, to: 16_000, quality: quality)
            let output = resampler.process([Float](repeating: 0, count: 4_800)) + resampler.flush()
            #expect(output.count == 1_600)
            #expect(output.allSatisfy { $0 == 0 })
        }
    }

    @Test func invalidRatesAreTypedErrors() {
        #expect(throws: AudioError.invalidFormat(AudioFormat(sampleRate: 0))) { try SoxrResampler(from: 0, to: 16_000) }
        #expect(throws: AudioError.invalidFormat(AudioFormat(sampleRate: -5))) { try SoxrResampler(from: 16_000, to: -5) }
    }

    @Test func worksAsAnExistentialAcrossTasks() async throws {
        let resampler: any Resampler = try SoxrResampler(from: 24_000, to: 16_000)
        let count = await Task.detached {
            var owned = resampler
            return owned.process([Float](repeating: 0.1, count: 2_400)).count + owned.flush().count
        }.value
        #expect(count == 1_600)
    }
}
