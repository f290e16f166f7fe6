import Foundation
import Testing
@testable import ParleyCore

/// Builds WAV files byte by byte, including broken ones.
struct WAVBuilder {
    var formatTag: UInt16 = 1
    var channelCount: UInt16 = 1
    var sampleRate: UInt32 = 16_000
    var bitsPerSample: UInt16 = 16
    var blockAlign: UInt16?
    var extensibleSubformat: [UInt8]?

    /// The `fmt ` chunk payload.
    var formatPayload: Data {
        var payload = Data()
        payload.appendLE(extensibleSubformat == nil ? formatTag : 0xFFFE)
        payload.appendLE(channelCount)
        payload.appendLE(sampleRate)
        payload.appendLE(sampleRate &* UInt32(channelCount) &* UInt32(bitsPerSample / 8))
        payload.appendLE(blockAlign ?? channelCount * bitsPerSample / 8)
        payload.appendLE(bitsPerSample)
        if let extensibleSubformat {
            payload.appendLE(UInt16(22))
            payload.appendLE(bitsPerSample)
            payload.appendLE(UInt32(0))
            payload.append(contentsOf: extensibleSubformat)
        }
        return payload
    }

    /// A chunk with a declared size (defaulting to the payload's) and its pad byte.
    static func chunk(_ id: String, _ payload: Data, declaredSize: UInt32? = nil) -> Data {
        var data = Data(id.utf8)
        data.appendLE(declaredSize ?? UInt32(payload.count))
        data.append(payload)
        if payload.count % 2 == 1 { data.append(0) }
        return data
    }

    /// A RIFF/WAVE file of `chunks`.
    static func file(_ chunks: [Data]) -> Data {
        let body = chunks.reduce(Data(), +)
        var data = Data("RIFF".utf8)
        data.appendLE(UInt32(4 + body.count))
        data.append(Data("WAVE".utf8))
        return data + body
    }

    /// A complete file with `audio` as its data chunk.
    func file(audio: Data) -> Data {
        Self.file([Self.chunk("fmt ", formatPayload), Self.chunk("data", audio)])
    }

    /// The GUID tail shared by the standard `WAVE_FORMAT_EXTENSIBLE` subformats.
    static func subformat(tag: UInt16) -> [UInt8] {
        [UInt8(tag & 0xFF), UInt8(tag >> 8)] + [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71]
    }
}

extension Data {
    mutating func appendLE<Value: FixedWidthInteger>(_ value: Value) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}

@Suite struct WAVFileTests {
    @Test func pcm16RoundTripMonoAndStereo() throws {
        for format in [AudioFormat.speech, AudioFormat(sampleRate: 44_100, channelCount: 2)] {
            let samples: [Int16] = (0..<400).map { Int16(truncatingIfNeeded: $0 * 997) }
            let data = WAVFile.pcm16Data(samples: samples, format: format)
            #expect(data.count == 44 + 800)
            let wav = try WAVFile.read(data)
            #expect(wav.format == format)
            #expect(wav.encoding == .pcm(bitsPerSample: 16))
            #expect(SampleConversion.pcm16(wav.samples) == samples)
        }
    }

    @Test func writerProducesCanonicalHeader() {
        let data = WAVFile.pcm16Data(PCM16Buffer(format: .realtime, samples: [1, -1]))
        let expected: [UInt8] = Array("RIFF".utf8) + [40, 0, 0, 0] + Array("WAVEfmt ".utf8) + [16, 0, 0, 0]
            + [1, 0, 1, 0] + [0xC0, 0x5D, 0, 0] + [0x80, 0xBB, 0, 0] + [2, 0, 16, 0]
            + Array("data".utf8) + [4, 0, 0, 0] + [1, 0, 0xFF, 0xFF]
        #expect(Array(data) == expected)
    }

    @Test func readsEveryIntegerDepthAndFloat() throws {
        let cases: [(WAVBuilder, Data, [Float])] = [
            (WAVBuilder(bitsPerSample: 8), Data([0, 128, 255, 192]), [-1, 0, 127.0 / 128, 0.5]),
            (WAVBuilder(bitsPerSample: 24), Data([0x00, 0x00, 0x80, 0xFF, 0xFF, 0x7F, 0x00, 0x00, 0x40]),
             [-1, 8_388_607.0 / 8_388_608, 0.5]),
            (WAVBuilder(bitsPerSample: 32), Data([0, 0, 0, 0x80, 0, 0, 0, 0x40]), [-1, 0.5]),
            (WAVBuilder(formatTag: 3, bitsPerSample: 32), floatBytes([0.25, -0.75, 3, .nan]), [0.25, -0.75, 1, 0]),
            (WAVBuilder(bitsPerSample: 24, extensibleSubformat: WAVBuilder.subformat(tag: 1)),
             Data([0x00, 0x00, 0xC0]), [-0.5]),
            (WAVBuilder(bitsPerSample: 32, extensibleSubformat: WAVBuilder.subformat(tag: 3)), floatBytes([0.125]), [0.125]),
        ]
        for (builder, audio, expected) in cases {
            let wav = try WAVFile.read(builder.file(audio: audio))
            #expect(wav.samples == expected, "\(builder.bitsPerSample)-bit tag \(builder.formatTag)")
        }
    }

    @Test func skipsUnknownAndOddSizedChunks() throws {
        let builder = WAVBuilder(channelCount: 2, sampleRate: 22_050)
        let data = WAVBuilder.file([
            WAVBuilder.chunk("LIST", Data("INFOxyz".utf8)),
            WAVBuilder.chunk("fmt ", builder.formatPayload),
            WAVBuilder.chunk("fact", Data(count: 4)),
            WAVBuilder.chunk("data", Data([0, 0x40, 0, 0xC0])),
        ])
        let wav = try WAVFile.read(data)
        #expect(wav.format == AudioFormat(sampleRate: 22_050, channelCount: 2))
        #expect(wav.samples == [0.5, -0.5])
        #expect(wav.buffer.mixedToMono().samples == [0])
    }

    @Test func readsStreamedFilesWithUnknownLengths() throws {
        var data = WAVBuilder.file([WAVBuilder.chunk("fmt ", WAVBuilder().formatPayload)])
        data.replaceSubrange(4..<8, with: [0, 0, 0, 0])
        data += Data("data".utf8) + [0xFF, 0xFF, 0xFF, 0xFF] + [0, 0x40, 0, 0xC0, 7]
        #expect(try WAVFile.read(data).samples == [0.5, -0.5])
    }

    @Test func ignoresBytesAfterTheDataChunk() throws {
        let data = WAVBuilder().file(audio: Data([0, 0x40])) + Data("id3 garbage".utf8)
        #expect(try WAVFile.read(data).samples == [0.5])
    }

    static let malformed: [(String, Data, WAVError)] = {
        let good = WAVBuilder()
        let fmt = WAVBuilder.chunk("fmt ", good.formatPayload)
        let audio = WAVBuilder.chunk("data", Data(count: 8))
        func broken(_ change: (inout WAVBuilder) -> Void) -> Data {
            var builder = good
            change(&builder)
            return builder.file(audio: Data(count: 8))
        }
        return [
            ("empty", Data(), .notWAVE),
            ("not RIFF", Data("RIFX\0\0\0\0WAVE".utf8), .notWAVE),
            ("not WAVE", Data("RIFF\0\0\0\0AVI ".utf8), .notWAVE),
            ("header only", WAVBuilder.file([]), .missingFormatChunk),
            ("truncated chunk header", WAVBuilder.file([fmt, Data("dat".utf8)]), .truncated(chunk: "header")),
            ("truncated data", WAVBuilder.file([fmt, WAVBuilder.chunk("data", Data(count: 8), declaredSize: 800)]),
             .truncated(chunk: "data")),
            ("huge declared data", WAVBuilder.file([fmt, WAVBuilder.chunk("data", Data(count: 8), declaredSize: 0x7FFF_FFFF)]),
             .truncated(chunk: "data")),
            ("huge declared fmt", WAVBuilder.file([WAVBuilder.chunk("fmt ", good.formatPayload, declaredSize: 0xFFFF_FFF0)]),
             .truncated(chunk: "fmt ")),
            ("huge unknown chunk", WAVBuilder.file([fmt, WAVBuilder.chunk("junk", Data(count: 2), declaredSize: 0xFFFF_FFFF)]),
             .truncated(chunk: "junk")),
            ("no data", WAVBuilder.file([fmt]), .missingDataChunk),
            ("data before fmt", WAVBuilder.file([audio, fmt]), .dataBeforeFormat),
            ("fmt too short", WAVBuilder.file([WAVBuilder.chunk("fmt ", good.formatPayload.prefix(14)), audio]),
             .invalidFormatChunk(size: 14)),
            ("extensible too short", WAVBuilder.file([
                WAVBuilder.chunk("fmt ", WAVBuilder(extensibleSubformat: WAVBuilder.subformat(tag: 1)).formatPayload.prefix(30)),
                audio,
            ]), .invalidFormatChunk(size: 30)),
            ("zero channels", broken { $0.channelCount = 0 }, .invalidChannelCount(0)),
            ("too many channels", broken { $0.channelCount = 64 }, .invalidChannelCount(64)),
            ("zero rate", broken { $0.sampleRate = 0 }, .invalidSampleRate(0)),
            ("absurd rate", broken { $0.sampleRate = 4_000_000_000 }, .invalidSampleRate(4_000_000_000)),
            ("ADPCM", broken { $0.formatTag = 2 }, .unsupportedEncoding(formatTag: 2)),
            ("12-bit", broken { $0.bitsPerSample = 12 }, .unsupportedBitDepth(bits: 12, isFloat: false)),
            ("64-bit float", broken { $0.formatTag = 3; $0.bitsPerSample = 64 }, .unsupportedBitDepth(bits: 64, isFloat: true)),
            ("extensible ADPCM", broken { $0.extensibleSubformat = WAVBuilder.subformat(tag: 2) }, .unsupportedExtensibleSubtype),
            ("extensible foreign GUID", broken { $0.extensibleSubformat = [1, 0] + [UInt8](repeating: 7, count: 14) },
             .unsupportedExtensibleSubtype),
            ("wrong block align", broken { $0.blockAlign = 3 }, .invalidBlockAlign(declared: 3, expected: 2)),
            ("partial frame", WAVBuilder().file(audio: Data(count: 7)), .partialFrame(byteCount: 7, blockAlign: 2)),
        ]
    }()

    @Test(arguments: malformed)
    func rejectsMalformedFilesWithTypedErrors(name: String, data: Data, expected: WAVError) {
        #expect(throws: expected, "\(name)") { try WAVFile.read(data) }
    }

    @Test func survivesRandomCorruption() {
        var generator = SeededGenerator(seed: 42)
        let good = WAVBuilder(channelCount: 2, bitsPerSample: 24).file(audio: Data(count: 600))
        for _ in 0..<3_000 {
            var data = good
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                data[Int.random(in: 0..<data.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            data = data.prefix(Int.random(in: 0...data.count, using: &generator))
            if let wav = try? WAVFile.read(data) {
                #expect(wav.samples.count <= data.count)
            }
        }
    }

    private func floatBytes(_ values: [Float]) -> Data {
        var data = Data()
        for value in values { data.appendLE(value.bitPattern) }
        return data
    }
}
