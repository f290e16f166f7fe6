import BenchmarkHarness
import Foundation
import ParleyCore

/// One user turn at 24 kHz in 20 ms chunks, repeated turn after turn: quiet, speech (a burst
/// of speech-like noise with syllable rhythm, or real synthesised speech), then quiet long
/// enough for the silence window and the spoken reply.
struct TurnAudio: Sendable {
    /// Chunk length: 20 ms at 24 kHz.
    static let chunkLength = 480
    /// Chunk duration in milliseconds.
    static let chunkMilliseconds = 20
    /// The realtime protocol's rate.
    static let sampleRate = 24_000

    /// The chunks of one turn, in order.
    let chunks: [[Int16]]
    /// Index of the last chunk that carries speech.
    let lastSpeechChunk: Int

    /// Builds a turn of `leadMs` quiet, `speechMs` speech and `tailMs` quiet.
    init(leadMs: Int = 200, speechMs: Int = 600, tailMs: Int = 800) {
        var state: UInt64 = 0x5EED_CAFE
        func noise() -> Float {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(Int32(truncatingIfNeeded: state >> 32)) / Float(Int32.max)
        }
        let rate = Double(Self.sampleRate)
        let total = (leadMs + speechMs + tailMs) * Self.sampleRate / 1000
        let speechStart = leadMs * Self.sampleRate / 1000
        let speechEnd = (leadMs + speechMs) * Self.sampleRate / 1000
        let samples: [Float] = (0..<total).map { index in
            let floor = 0.002 * noise()
            guard index >= speechStart, index < speechEnd else { return floor }
            let time = Double(index - speechStart) / rate
            let syllables = Float(0.55 + 0.45 * sin(2 * .pi * 4 * time))
            return floor + 0.25 * syllables * noise()
        }
        let pcm = SampleConversion.pcm16(samples)
        chunks = stride(from: 0, to: pcm.count, by: Self.chunkLength).map { Array(pcm[$0..<min($0 + Self.chunkLength, pcm.count)]) }
        lastSpeechChunk = (speechEnd - 1) / Self.chunkLength
    }

    /// Builds a turn of `leadMs` quiet, the given speech at 24 kHz, and `tailMs` quiet; the last
    /// voiced sample (`EndOfSpeech`) ends the speech.
    init(speech: [Int16], leadMs: Int, tailMs: Int) {
        let lead = [Int16](repeating: 0, count: leadMs * Self.sampleRate / 1000)
        let lastVoiced = EndOfSpeech.lastVoicedSample(in: speech) ?? max(speech.count - 1, 0)
        let pcm = lead + speech[...lastVoiced] + [Int16](repeating: 0, count: tailMs * Self.sampleRate / 1000)
        chunks = stride(from: 0, to: pcm.count, by: Self.chunkLength).map {
            let chunk = Array(pcm[$0..<min($0 + Self.chunkLength, pcm.count)])
            return chunk + [Int16](repeating: 0, count: Self.chunkLength - chunk.count)
        }
        lastSpeechChunk = EndOfSpeech.chunk(holding: lead.count + lastVoiced, sampleRate: Self.sampleRate)
    }

    /// Chunks per turn.
    var count: Int { chunks.count }
}

/// How far a session has resampled its input after each chunk: the session's input clock
/// (in samples at the recognizer's rate) runs behind what was sent by the resampler's delay.
/// With it, the turn detector's `audio_end_ms` maps back to the chunk whose arrival ended the
/// turn — the moment the user's turn was over as far as the server could know.
struct ResampledTimeline: Sendable {
    /// Samples out of the resampler after chunk k.
    private let cumulativeSamples: [Int]
    private let outputRate: Int

    /// Runs `makeResampler(24 kHz → outputRate)` over `chunkCount` chunks of 20 ms.
    init(chunkCount: Int, outputRate: Int, makeResampler: (Int, Int) -> any Resampler) {
        var resampler = makeResampler(TurnAudio.sampleRate, outputRate)
        let silence = [Float](repeating: 0, count: TurnAudio.chunkLength)
        var total = 0
        cumulativeSamples = (0..<chunkCount).map { _ in
            total += resampler.process(silence).count
            return total
        }
        self.outputRate = outputRate
    }

    /// The index of the chunk whose arrival ended a turn at input time `milliseconds` (a
    /// `speech_stopped` `audio_end_ms`). A turn ended on audio the resampler still held back
    /// ends exactly at the end of the chunk that brought it, a multiple of the chunk length;
    /// otherwise it ended with the first chunk after which the resampled input reached it.
    func chunkIndex(reaching milliseconds: Int) -> Int? {
        if milliseconds > 0, milliseconds % TurnAudio.chunkMilliseconds == 0 {
            let index = milliseconds / TurnAudio.chunkMilliseconds - 1
            return index < cumulativeSamples.count ? index : nil
        }
        let needed = milliseconds * outputRate / 1000
        var low = 0
        var high = cumulativeSamples.count
        while low < high {
            let middle = (low + high) / 2
            if cumulativeSamples[middle] >= needed { high = middle } else { low = middle + 1 }
        }
        return low < cumulativeSamples.count ? low : nil
    }
}
