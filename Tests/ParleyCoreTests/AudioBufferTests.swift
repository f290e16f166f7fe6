import Foundation
import Testing
@testable import ParleyCore

@Suite struct AudioBufferTests {
    @Test(arguments: [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ])
    func base64MatchesRFC4648Vectors(plain: String, encoded: String) throws {
        #expect(Base64Codec.encode(Array(plain.utf8)) == encoded)
        #expect(try Base64Codec.decode(encoded) == Array(plain.utf8))
    }

    @Test func base64AgreesWithFoundationOnRandomBytes() throws {
        var generator = SeededGenerator(seed: 7)
        for length in 0..<200 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base64Codec.encode(bytes)
            #expect(encoded == Data(bytes).base64EncodedString())
            #expect(try Base64Codec.decode(encoded) == bytes)
        }
    }

    @Test func base64AcceptsUnpaddedText() throws {
        #expect(try Base64Codec.decode("Zm8") == Array("fo".utf8))
        #expect(try Base64Codec.decode("Zg") == Array("f".utf8))
    }

    @Test(arguments: [
        ("Zm9v!mFy", 4), ("Zm9v YmFy", 4), ("Z", 0), ("Zm9vY", 4), ("Zg=", 2), ("=Zg=", 0), ("Zm9vYm=y", 6),
        ("Zm\u{e9}v", 2),
    ])
    func base64RejectsInvalidTextWithOffset(text: String, offset: Int) {
        #expect(throws: AudioError.invalidBase64(offset: offset)) { try Base64Codec.decode(text) }
    }

    @Test func pcm16Base64RoundTripIsLittleEndian() throws {
        let buffer = PCM16Buffer(format: .realtime, samples: [0, 1, -1, .max, .min, 0x1234])
        let encoded = buffer.base64EncodedString()
        #expect(Array(Data(base64Encoded: encoded)!) == [0, 0, 1, 0, 0xFF, 0xFF, 0xFF, 0x7F, 0x00, 0x80, 0x34, 0x12])
        #expect(try PCM16Buffer(format: .realtime, base64: encoded) == buffer)
    }

    @Test func pcm16RejectsOddBytesAndPartialFrames() {
        #expect(throws: AudioError.oddByteCount(3)) { try PCM16Buffer(base64: Base64Codec.encode([1, 2, 3])) }
        #expect(throws: AudioError.oddByteCount(3)) { try PCM16Buffer(littleEndianData: Data([1, 2, 3])) }
        let stereo = AudioFormat(sampleRate: 48_000, channelCount: 2)
        #expect(throws: AudioError.partialFrame(sampleCount: 3, channelCount: 2)) {
            try PCM16Buffer(format: stereo, littleEndianData: Data(count: 6))
        }
        let broken = AudioFormat(sampleRate: 0)
        #expect(throws: AudioError.invalidFormat(broken)) { try PCM16Buffer(format: broken, base64: "") }
    }

    @Test func pcm16DataRoundTrip() throws {
        let samples: [Int16] = [100, -200, 300, .min, .max]
        let data = PCM16Buffer(samples: samples).littleEndianData()
        #expect(Array(data.prefix(4)) == [100, 0, 0x38, 0xFF])
        #expect(try PCM16Buffer(littleEndianData: data).samples == samples)
        // A slice of a larger Data (non-zero start index, odd alignment) reads the same.
        let padded = Data([9]) + data
        #expect(try PCM16Buffer(littleEndianData: padded.dropFirst()).samples == samples)
    }

    @Test func floatConversionRoundTripIsExact() {
        let all = (Int(Int16.min)...Int(Int16.max)).map { Int16($0) }
        let floats = SampleConversion.float(all)
        #expect(floats.first == -1)
        #expect(floats.allSatisfy { (-1..<1).contains($0) })
        #expect(SampleConversion.pcm16(floats) == all)
    }

    @Test func floatToPCM16ClipsRoundsAndZeroesNaN() {
        #expect(SampleConversion.pcm16([2, -2, .infinity, -.infinity, .nan, 0.5, -0.5, 1 / 65536, 0.9 / 65536])
            == [.max, .min, .max, .min, 0, 16384, -16384, 1, 0])
    }

    @Test func buffersConvertBothWaysAndMixToMono() {
        let stereo = AudioFormat(sampleRate: 8_000, channelCount: 2)
        let pcm = PCM16Buffer(format: stereo, samples: [16384, 0, -16384, -16384])
        let float = FloatBuffer(pcm)
        #expect(float.samples == [0.5, 0, -0.5, -0.5])
        #expect(float.frameCount == 2)
        #expect(PCM16Buffer(float) == pcm)
        let mono = float.mixedToMono()
        #expect(mono.format == AudioFormat(sampleRate: 8_000))
        #expect(mono.samples == [0.25, -0.5])
    }

    @Test func durationArithmetic() {
        let buffer = PCM16Buffer(format: .realtime, samples: [Int16](repeating: 0, count: 2_400))
        #expect(buffer.durationMilliseconds == 100)
        #expect(AudioFormat.realtime.frameCount(milliseconds: 20) == 480)
        #expect(AudioFormat.speech.pcm16ByteCount(frameCount: 320) == 640)
    }
}
