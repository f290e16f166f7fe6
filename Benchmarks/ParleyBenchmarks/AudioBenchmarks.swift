import Foundation
import ParleyCore
import ParleyLocal

/// Audio-path throughput: energy VAD, turn detector, libsoxr and windowed-sinc resampling, base64 PCM16.
func runAudioBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    let seconds = quick ? 10 : 60
    let speech = benchmarkSignal(seconds: seconds, sampleRate: 16_000)
    let frames = stride(from: 0, to: speech.count - 320, by: 320).map { Array(speech[$0..<($0 + 320)]) }
    var results: [BenchmarkResult] = []

    var probabilities: [Float] = []
    let vadTime = medianSecondsPerCall {
        var vad = EnergyVAD()
        probabilities = frames.map { vad.speechProbability(of: $0) }
    }
    let vadRealTime = Double(frames.count) * 0.02 / vadTime
    results.append(audioResult("EnergyVAD frames/s (20 ms at 16 kHz)", Double(frames.count) / vadTime, "frames/s", ""))
    results.append(audioResult("EnergyVAD x real time", vadRealTime, "x", ">= 2000x", vadRealTime >= 2_000))

    var actionCount = 0
    let turnTime = medianSecondsPerCall {
        var turns = TurnDetector()
        actionCount = 0
        for (index, frame) in frames.enumerated() {
            actionCount += turns.process(probability: probabilities[index], frame: frame, at: index * 20).count
        }
    }
    results.append(audioResult("TurnDetector steps/s (\(actionCount) actions)", Double(frames.count) / turnTime, "steps/s", ""))

    let realtime = benchmarkSignal(seconds: seconds, sampleRate: 24_000)
    let chunks = stride(from: 0, to: realtime.count, by: 480).map { Array(realtime[$0..<min($0 + 480, realtime.count)]) }
    let soxr = try SoxrResampler(from: 24_000, to: 16_000)
    var resampledCount = 0
    let soxrTime = medianSecondsPerCall {
        resampledCount = 0
        for chunk in chunks { resampledCount += soxr.process(chunk).count }
        resampledCount += soxr.flush().count
    }
    let soxrRealTime = Double(seconds) / soxrTime
    results.append(audioResult("soxr 24->16 kHz x real time (20 ms chunks)", soxrRealTime, "x", ">= 500x", soxrRealTime >= 500))

    // Live input goes through the windowed-sinc resampler (it holds back under 1 ms).
    var sinc = try SincResampler(from: 24_000, to: 16_000)
    let sincTime = medianSecondsPerCall {
        for chunk in chunks { resampledCount += sinc.process(chunk).count }
        resampledCount += sinc.flush().count
    }
    let sincRealTime = Double(seconds) / sincTime
    results.append(audioResult("sinc 24->16 kHz (live input) x real time (20 ms chunks)", sincRealTime, "x", ">= 500x", sincRealTime >= 500))

    let pcm = PCM16Buffer(format: .realtime, samples: SampleConversion.pcm16(realtime))
    let chunkBuffers = stride(from: 0, to: pcm.samples.count, by: 2_400).map {
        PCM16Buffer(format: .realtime, samples: Array(pcm.samples[$0..<min($0 + 2_400, pcm.samples.count)]))
    }
    let megabytes = Double(pcm.samples.count * 2) / 1_000_000
    var encoded: [String] = []
    let encodeTime = medianSecondsPerCall { encoded = chunkBuffers.map { $0.base64EncodedString() } }
    let encodeRate = megabytes / encodeTime
    results.append(audioResult("base64 pcm16 encode MB/s (100 ms chunks)", encodeRate, "MB/s", ">= 300 MB/s", encodeRate >= 300))
    var decodedCount = 0
    let decodeTime = try medianSecondsPerCall {
        decodedCount = 0
        for text in encoded { decodedCount += try PCM16Buffer(base64: text).samples.count }
    }
    let decodeRate = megabytes / decodeTime
    results.append(audioResult("base64 pcm16 decode MB/s (100 ms chunks)", decodeRate, "MB/s", ">= 300 MB/s", decodeRate >= 300))
    precondition(decodedCount == pcm.samples.count && resampledCount > 0, "benchmark lost samples")
    return results
}

/// Speech-like test audio: syllable-modulated noise bursts with pauses, over quiet noise.
private func benchmarkSignal(seconds: Int, sampleRate: Int) -> [Float] {
    var state: UInt64 = 0x5EED
    func noise() -> Float {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Float(Int32(truncatingIfNeeded: state >> 32)) / Float(Int32.max)
    }
    return (0..<(seconds * sampleRate)).map { index in
        let time = Double(index) / Double(sampleRate)
        let talking = time.truncatingRemainder(dividingBy: 3) < 1.8
        let syllables = Float(0.6 + 0.4 * sin(2 * .pi * 4 * time))
        return 0.003 * noise() + (talking ? 0.2 * syllables * noise() : 0)
    }
}

/// A result in the audio area.
private func audioResult(_ name: String, _ value: Double, _ unit: String, _ target: String, _ meets: Bool? = nil) -> BenchmarkResult {
    BenchmarkResult(area: "audio", name: name, value: value, unit: unit, target: target, meetsTarget: meets)
}
