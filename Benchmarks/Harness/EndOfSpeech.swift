/// Where a question's speech ends, for every benchmark that times a reply from it: the last
/// sample louder than -36 dBFS, and the streamed chunk that carries it.
public enum EndOfSpeech {
    /// -36 dBFS as a fraction of full scale: a sample louder than this is voiced.
    public static let voicedLevel: Float = 0.016
    /// `voicedLevel` as a 16-bit sample (0.016 × 32,768).
    public static let voicedLevel16: Int16 = 524
    /// How figure names state the level.
    public static let voicedLevelLabel = "> -36 dBFS"

    /// The index of the last sample of `samples` louder than `voicedLevel`; `nil` when none is.
    public static func lastVoicedSample(in samples: [Float]) -> Int? {
        samples.lastIndex { abs($0) > voicedLevel }
    }

    /// The index of the last sample of `samples` louder than `voicedLevel16`; `nil` when none is.
    public static func lastVoicedSample(in samples: [Int16]) -> Int? {
        samples.lastIndex { abs(Int32($0)) > Int32(voicedLevel16) }
    }

    /// The index of the chunk that carries sample `sample` of audio at `sampleRate` streamed
    /// from its first sample in chunks of `chunkMilliseconds`.
    ///
    /// ```swift
    /// EndOfSpeech.chunk(holding: 479, sampleRate: 24_000)  // 0: the first 20 ms chunk
    /// EndOfSpeech.chunk(holding: 480, sampleRate: 24_000)  // 1
    /// ```
    public static func chunk(holding sample: Int, sampleRate: Int, chunkMilliseconds: Int = 20) -> Int {
        sample / (sampleRate * chunkMilliseconds / 1000)
    }
}
