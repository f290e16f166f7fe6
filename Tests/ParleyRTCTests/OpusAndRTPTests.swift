import Foundation
import ParleyRTC
import Testing

/// libopus through the codec wrappers, and RTP packets, on real data.
@Suite struct OpusAndRTPTests {
    /// A 440 Hz tone at 24 kHz.
    private func tone(samples: Int) -> [Int16] {
        (0..<samples).map { Int16(8_000 * sin(2 * Double.pi * 440 * Double($0) / 24_000)) }
    }

    @Test func opusCarriesSpeechBandAudioAt24Kilohertz() throws {
        let encoder = try OpusVoiceEncoder(sampleRate: 24_000)
        let decoder = try OpusVoiceDecoder(sampleRate: 24_000)
        let input = tone(samples: 480 * 50)
        var output: [Int16] = []
        var bytes = 0
        for start in stride(from: 0, to: input.count, by: 480) {
            let packet = try #require(encoder.encode(input[start..<start + 480]))
            bytes += packet.count
            output += decoder.decode(packet)
        }
        #expect(output.count == input.count)
        // 32 kb/s: about 80 bytes per 20 ms frame.
        #expect(bytes / 50 < 120)
        // After the codec's delay the tone's energy survives.
        let energy = { (samples: ArraySlice<Int16>) in samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count) }
        let ratio = energy(output[4_800...]) / energy(input[4_800...])
        #expect(ratio > 0.5 && ratio < 2, "energy ratio \(ratio)")
    }

    @Test func lostPacketsAreConcealedWithFECOrPLC() throws {
        let encoder = try OpusVoiceEncoder(sampleRate: 24_000)
        let decoder = try OpusVoiceDecoder(sampleRate: 24_000)
        let input = tone(samples: 480 * 3)
        let packets = try (0..<3).map { try #require(encoder.encode(input[$0 * 480..<($0 + 1) * 480])) }
        _ = decoder.decode(packets[0])
        #expect(decoder.conceal(samples: 480, next: packets[2]).count == 480)
        #expect(decoder.conceal(samples: 480, next: nil).count == 480)
    }

    @Test func anUnsupportedRateIsAClearError() {
        #expect(throws: RTCError.self) { try OpusVoiceEncoder(sampleRate: 44_100) }
    }

    @Test func rtpPacketsRoundTripAndHostileOnesAreRefused() {
        let packet = RTPPacket(payloadType: 111, sequenceNumber: 65_535, timestamp: 0xDEAD_BEEF, ssrc: 42, marker: true, payload: [1, 2, 3])
        #expect(RTPPacket(parsing: packet.bytes) == packet)
        #expect(RTPPacket(parsing: [0x80, 111]) == nil)
        // A header extension longer than the packet.
        #expect(RTPPacket(parsing: [0x90, 111, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0xBE, 0xDE, 0xFF, 0xFF]) == nil)
        // Padding longer than the packet.
        #expect(RTPPacket(parsing: [0xA0, 111, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 200]) == nil)
    }
}
