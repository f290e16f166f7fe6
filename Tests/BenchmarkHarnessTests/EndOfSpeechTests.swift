import BenchmarkHarness
import Testing

@Suite struct EndOfSpeechTests {
    /// 100 quiet samples, a burst of 48 loud ones, then a tail quieter than -36 dBFS.
    private let clip: [Float] = [Float](repeating: 0.001, count: 100) + [Float](repeating: 0.3, count: 48)
        + [Float](repeating: 0.015, count: 200) + [Float](repeating: 0, count: 100)

    @Test func theLastSampleLouderThanMinus36dBFSEndsTheSpeech() {
        #expect(EndOfSpeech.lastVoicedSample(in: clip) == 147)
        #expect(EndOfSpeech.lastVoicedSample(in: clip.map { -$0 }) == 147)
        #expect(EndOfSpeech.lastVoicedSample(in: [Float](repeating: EndOfSpeech.voicedLevel, count: 10)) == nil)
        #expect(EndOfSpeech.lastVoicedSample(in: [Float]()) == nil)
    }

    @Test func sixteenBitAudioHasTheSameRule() {
        let pcm = clip.map { Int16($0 * 32_768) }
        #expect(EndOfSpeech.lastVoicedSample(in: pcm) == 147)
        #expect(EndOfSpeech.lastVoicedSample(in: [0, 524, -524, 525, 0, -525, 0] as [Int16]) == 5)
        #expect(EndOfSpeech.lastVoicedSample(in: [Int16.min, 0] as [Int16]) == 0)
    }

    @Test func theChunkThatCarriesASampleCountsWhole20msChunks() {
        #expect(EndOfSpeech.chunk(holding: 0, sampleRate: 24_000) == 0)
        #expect(EndOfSpeech.chunk(holding: 479, sampleRate: 24_000) == 0)
        #expect(EndOfSpeech.chunk(holding: 480, sampleRate: 24_000) == 1)
        #expect(EndOfSpeech.chunk(holding: 319, sampleRate: 16_000) == 0)
        #expect(EndOfSpeech.chunk(holding: 320, sampleRate: 16_000) == 1)
        #expect(EndOfSpeech.chunk(holding: 159, sampleRate: 8_000) == 0 && EndOfSpeech.chunk(holding: 160, sampleRate: 8_000) == 1)
    }
}
