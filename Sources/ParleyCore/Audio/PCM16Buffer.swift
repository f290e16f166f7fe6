import Foundation

/// Interleaved signed 16-bit PCM samples with their format: the realtime protocol's audio.
public struct PCM16Buffer: Sendable, Hashable {
    /// Sample rate and channel count of `samples`.
    public var format: AudioFormat
    /// Interleaved samples, native integers (byte order only matters in `Data` and base64).
    public var samples: [Int16]

    /// Wraps samples already in memory.
    public init(format: AudioFormat = .realtime, samples: [Int16]) {
        self.format = format
        self.samples = samples
    }

    /// Reads little-endian 16-bit PCM bytes.
    /// - Throws: `AudioError.invalidFormat`, `.oddByteCount`, or `.partialFrame`.
    public init(format: AudioFormat = .realtime, littleEndianData data: Data) throws(AudioError) {
        try Self.validate(format)
        guard data.count % 2 == 0 else { throw .oddByteCount(data.count) }
        let samples = data.withUnsafeBytes { bytes in
            [Int16](unsafeUninitializedCapacity: bytes.count / 2) { output, count in
                UnsafeMutableRawBufferPointer(output).copyMemory(from: bytes)
                count = bytes.count / 2
            }
        }
        try self.init(format: format, validatedLittleEndian: samples)
    }

    /// Decodes base64 text of little-endian 16-bit PCM, as carried by the realtime protocol.
    /// - Throws: `AudioError.invalidBase64`, `.oddByteCount`, `.invalidFormat`, or `.partialFrame`.
    ///
    /// ```swift
    /// let chunk = try PCM16Buffer(format: .realtime, base64: event.audio)
    /// ```
    public init(format: AudioFormat = .realtime, base64: String) throws(AudioError) {
        try Self.validate(format)
        try self.init(format: format, validatedLittleEndian: Base64Codec.decode(base64, as: Int16.self))
    }

    /// Converts float samples, rounding and clipping to the 16-bit range.
    public init(_ buffer: FloatBuffer) {
        self.init(format: buffer.format, samples: SampleConversion.pcm16(buffer.samples))
    }

    /// Frames (samples per channel) in the buffer.
    public var frameCount: Int { samples.count / max(format.channelCount, 1) }

    /// Duration in milliseconds, rounded down.
    public var durationMilliseconds: Int { format.milliseconds(frameCount: frameCount) }

    /// The samples as little-endian bytes.
    public func littleEndianData() -> Data {
        Self.inLittleEndianOrder(samples).withUnsafeBytes { Data($0) }
    }

    /// The samples as base64 text of little-endian bytes, as the realtime protocol carries them.
    public func base64EncodedString() -> String {
        Self.inLittleEndianOrder(samples).withUnsafeBytes { Base64Codec.encode($0) }
    }

    /// Checks that a format can describe real audio.
    static func validate(_ format: AudioFormat) throws(AudioError) {
        guard format.sampleRate > 0, format.channelCount > 0 else { throw .invalidFormat(format) }
    }

    /// Finishes initialisation from samples whose bytes were read in little-endian order.
    private init(format: AudioFormat, validatedLittleEndian samples: [Int16]) throws(AudioError) {
        guard samples.count % format.channelCount == 0 else {
            throw .partialFrame(sampleCount: samples.count, channelCount: format.channelCount)
        }
        self.init(format: format, samples: Self.inLittleEndianOrder(samples))
    }

    /// Swaps bytes on big-endian hosts (the swap is its own inverse); returns `samples` as is
    /// on little-endian ones.
    private static func inLittleEndianOrder(_ samples: [Int16]) -> [Int16] {
        #if _endian(big)
        return samples.map { $0.byteSwapped }
        #else
        return samples
        #endif
    }
}
