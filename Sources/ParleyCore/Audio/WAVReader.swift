import Foundation

/// Walks the chunks of a RIFF/WAVE file held in memory and decodes its samples.
struct WAVReader {
    /// The file's bytes.
    let bytes: UnsafeRawBufferPointer

    /// The `fmt ` chunk fields this reader needs, validated.
    private struct FormatChunk {
        var format: AudioFormat
        var encoding: WAVFile.Encoding
        var blockAlign: Int
    }

    /// The size the `data` chunk of a file written as a stream declares when its length was unknown.
    private static let unknownLength = Int(UInt32.max)

    /// Decodes the file.
    func read() throws(WAVError) -> WAVFile {
        guard bytes.count >= 12, fourCC(at: 0) == "RIFF", fourCC(at: 8) == "WAVE" else { throw .notWAVE }
        // The RIFF size is ignored: stream writers leave it 0 or 0xFFFFFFFF, and every chunk is
        // checked against the bytes actually present instead.
        let end = bytes.count
        var offset = 12
        var formatChunk: FormatChunk?
        while offset + 8 <= end {
            let id = fourCC(at: offset)
            let declaredSize = Int(uint32(at: offset + 4))
            let payload = offset + 8
            let available = end - payload
            switch id {
            case "fmt ":
                guard declaredSize <= available else { throw .truncated(chunk: id) }
                if formatChunk == nil { formatChunk = try parseFormat(at: payload, size: declaredSize) }
            case "data":
                guard let formatChunk else { throw .dataBeforeFormat }
                let size: Int
                if declaredSize <= available {
                    size = declaredSize
                } else if declaredSize == Self.unknownLength {
                    size = available - available % formatChunk.blockAlign
                } else {
                    throw .truncated(chunk: id)
                }
                return try decode(formatChunk, at: payload, size: size)
            default:
                guard declaredSize <= available else { throw .truncated(chunk: id) }
            }
            offset = payload + declaredSize + declaredSize % 2
        }
        if offset < end { throw .truncated(chunk: "header") }
        throw formatChunk == nil ? .missingFormatChunk : .missingDataChunk
    }

    /// Parses and validates a `fmt ` chunk.
    private func parseFormat(at offset: Int, size: Int) throws(WAVError) -> FormatChunk {
        guard size >= 16 else { throw .invalidFormatChunk(size: size) }
        var tag = Int(uint16(at: offset))
        let channelCount = Int(uint16(at: offset + 2))
        let sampleRate = Int(uint32(at: offset + 4))
        let blockAlign = Int(uint16(at: offset + 12))
        let bitsPerSample = Int(uint16(at: offset + 14))
        if tag == 0xFFFE {
            guard size >= 40 else { throw .invalidFormatChunk(size: size) }
            let subformat = offset + 24
            let guidSuffix: [UInt8] = [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71]
            let subtag = Int(uint16(at: subformat))
            guard Array(bytes[(subformat + 2)..<(subformat + 16)]) == guidSuffix, subtag == 1 || subtag == 3 else {
                throw .unsupportedExtensibleSubtype
            }
            tag = subtag
        }
        let encoding: WAVFile.Encoding
        switch (tag, bitsPerSample) {
        case (1, 8), (1, 16), (1, 24), (1, 32): encoding = .pcm(bitsPerSample: bitsPerSample)
        case (3, 32): encoding = .float32
        case (1, _), (3, _): throw .unsupportedBitDepth(bits: bitsPerSample, isFloat: tag == 3)
        default: throw .unsupportedEncoding(formatTag: tag)
        }
        guard (1...WAVFile.maximumChannelCount).contains(channelCount) else {
            throw .invalidChannelCount(channelCount)
        }
        guard WAVFile.sampleRateRange.contains(sampleRate) else { throw .invalidSampleRate(sampleRate) }
        let expectedBlockAlign = channelCount * bitsPerSample / 8
        guard blockAlign == expectedBlockAlign else {
            throw .invalidBlockAlign(declared: blockAlign, expected: expectedBlockAlign)
        }
        return FormatChunk(
            format: AudioFormat(sampleRate: sampleRate, channelCount: channelCount),
            encoding: encoding,
            blockAlign: blockAlign
        )
    }

    /// Decodes `size` bytes of samples starting at `offset`.
    private func decode(_ chunk: FormatChunk, at offset: Int, size: Int) throws(WAVError) -> WAVFile {
        guard size % chunk.blockAlign == 0 else {
            throw .partialFrame(byteCount: size, blockAlign: chunk.blockAlign)
        }
        let audio = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + size)])
        let samples: [Float]
        switch chunk.encoding {
        case .pcm(8): samples = Self.convert(audio, width: 1) { Float(Int($0.load(as: UInt8.self)) - 128) / 128 }
        case .pcm(16): samples = Self.convert(audio, width: 2) {
            Float(Int16(littleEndian: $0.loadUnaligned(as: Int16.self))) / 32768
        }
        case .pcm(24): samples = Self.convert(audio, width: 3) { pointer in
            let unsigned = Int32(pointer.load(as: UInt8.self)) | Int32(pointer.load(fromByteOffset: 1, as: UInt8.self)) << 8
                | Int32(pointer.load(fromByteOffset: 2, as: UInt8.self)) << 16
            return Float((unsigned << 8) >> 8) / 8_388_608
        }
        case .pcm: samples = Self.convert(audio, width: 4) {
            Float(Int32(littleEndian: $0.loadUnaligned(as: Int32.self))) / 2_147_483_648
        }
        case .float32: samples = Self.convert(audio, width: 4) {
            let value = Float(bitPattern: UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)))
            return value.isNaN ? 0 : min(max(value, -1), 1)
        }
        }
        return WAVFile(format: chunk.format, encoding: chunk.encoding, samples: samples)
    }

    /// Converts every `width`-byte sample of `audio` with `sample`.
    private static func convert(
        _ audio: UnsafeRawBufferPointer, width: Int, _ sample: (UnsafeRawPointer) -> Float
    ) -> [Float] {
        let count = audio.count / width
        guard count > 0, let base = audio.baseAddress else { return [] }
        return [Float](unsafeUninitializedCapacity: count) { output, initialized in
            for index in 0..<count { output[index] = sample(base + index * width) }
            initialized = count
        }
    }

    /// The four ASCII characters at `offset`.
    private func fourCC(at offset: Int) -> String {
        String(decoding: bytes[offset..<(offset + 4)], as: Unicode.ASCII.self)
    }

    /// The little-endian 16-bit integer at `offset`.
    private func uint16(at offset: Int) -> UInt16 {
        UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    /// The little-endian 32-bit integer at `offset`.
    private func uint32(at offset: Int) -> UInt32 {
        UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
}
