import Foundation

/// A decoded RIFF/WAVE file, and a 16-bit PCM writer.
///
/// Reads PCM 8/16/24/32-bit integer and 32-bit IEEE float (plain or `WAVE_FORMAT_EXTENSIBLE`),
/// any channel count up to `maximumChannelCount`, any rate in `sampleRateRange`, skipping
/// chunks it does not know. Every size is checked against the bytes actually present, so a
/// hostile header can neither crash the reader nor make it allocate more than the input holds.
public struct WAVFile: Sendable, Hashable {
    /// How the samples were stored in the file.
    public enum Encoding: Sendable, Hashable {
        /// Integer PCM: unsigned for 8 bits, signed for 16, 24 and 32.
        case pcm(bitsPerSample: Int)
        /// 32-bit IEEE float.
        case float32
    }

    /// The most channels a file may declare.
    public static let maximumChannelCount = 8
    /// The sample rates a file may declare.
    public static let sampleRateRange = 1_000...768_000

    /// Sample rate and channel count.
    public var format: AudioFormat
    /// The stored encoding.
    public var encoding: Encoding
    /// Interleaved samples in `[-1, 1]` (float files are clipped to that range, NaN becomes 0).
    public var samples: [Float]

    /// Creates a decoded file value.
    public init(format: AudioFormat, encoding: Encoding, samples: [Float]) {
        self.format = format
        self.encoding = encoding
        self.samples = samples
    }

    /// The samples with their format.
    public var buffer: FloatBuffer { FloatBuffer(format: format, samples: samples) }

    /// Decodes a WAV file.
    /// - Throws: `WAVError` naming what is wrong with the file.
    ///
    /// ```swift
    /// let wav = try WAVFile.read(Data(contentsOf: url))
    /// let mono = wav.buffer.mixedToMono()
    /// ```
    public static func read(_ data: Data) throws(WAVError) -> WAVFile {
        let result: Result<WAVFile, WAVError> = data.withUnsafeBytes { bytes in
            Result { () throws(WAVError) in try WAVReader(bytes: bytes).read() }
        }
        return try result.get()
    }

    /// Encodes 16-bit PCM samples as a canonical 44-byte-header WAV file.
    ///
    /// `samples` are interleaved for `format.channelCount` channels. The data must fit the
    /// format's 32-bit sizes (about 4 GB); larger input is a programming error.
    public static func pcm16Data(samples: [Int16], format: AudioFormat) -> Data {
        let dataByteCount = samples.count * 2
        precondition(dataByteCount <= Int(UInt32.max) - 36, "WAV data too large for 32-bit sizes")
        let channelCount = max(format.channelCount, 1)
        var header = Data(capacity: 44 + dataByteCount)
        header.append(contentsOf: Array("RIFF".utf8))
        header.appendLittleEndian(UInt32(36 + dataByteCount))
        header.append(contentsOf: Array("WAVEfmt ".utf8))
        header.appendLittleEndian(UInt32(16))
        header.appendLittleEndian(UInt16(1))
        header.appendLittleEndian(UInt16(channelCount))
        header.appendLittleEndian(UInt32(format.sampleRate))
        header.appendLittleEndian(UInt32(format.sampleRate * channelCount * 2))
        header.appendLittleEndian(UInt16(channelCount * 2))
        header.appendLittleEndian(UInt16(16))
        header.append(contentsOf: Array("data".utf8))
        header.appendLittleEndian(UInt32(dataByteCount))
        header.append(PCM16Buffer(format: format, samples: samples).littleEndianData())
        return header
    }

    /// Encodes a 16-bit buffer as a WAV file; see `pcm16Data(samples:format:)`.
    public static func pcm16Data(_ buffer: PCM16Buffer) -> Data {
        pcm16Data(samples: buffer.samples, format: buffer.format)
    }
}

extension Data {
    /// Appends an integer in little-endian byte order.
    fileprivate mutating func appendLittleEndian<Value: FixedWidthInteger>(_ value: Value) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}
