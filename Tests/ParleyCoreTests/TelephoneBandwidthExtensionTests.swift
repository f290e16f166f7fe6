import Foundation
import Testing
@testable import ParleyCore

/// The telephone bandwidth extension: the 3–4 kHz band comes back mirrored above 4 kHz at
/// −10 dB; speech below it passes with no image; chunking does not change the result.
@Suite struct TelephoneBandwidthExtensionTests {
    /// Power of `frequency` in `samples` at 16 kHz (Goertzel).
    static func power(_ samples: [Float], at frequency: Double) -> Double {
        let coefficient = 2 * cos(2 * Double.pi * frequency / 16_000)
        var (previous, beforePrevious) = (0.0, 0.0)
        for sample in samples {
            (previous, beforePrevious) = (Double(sample) + coefficient * previous - beforePrevious, previous)
        }
        return previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
    }

    static func tone(_ frequency: Double) -> [Float] {
        (0..<16_000).map { Float(0.5 * sin(2 * Double.pi * frequency * Double($0) / 16_000)) }
    }

    @Test func aFricativeBandIsMirroredAboveFourKilohertz() {
        var widening = TelephoneBandwidthExtension()
        let output = Array(widening.process(Self.tone(3_600)).dropFirst(800))
        let input = Array(Self.tone(3_600).dropFirst(800))
        let imageDB = 10 * log10(Self.power(output, at: 4_400) / Self.power(input, at: 3_600))
        #expect((-15 ... -10).contains(imageDB), "image at \(imageDB) dB")
    }

    @Test func voicedSpeechBelowTheBandGetsNoImage() {
        var widening = TelephoneBandwidthExtension()
        let output = Array(widening.process(Self.tone(500)).dropFirst(800))
        let imageDB = 10 * log10(Self.power(output, at: 7_500) / Self.power(output, at: 500))
        #expect(imageDB < -50, "image at \(imageDB) dB")
    }

    @Test func chunkingDoesNotChangeTheOutput() {
        let signal = Self.tone(3_300)
        var whole = TelephoneBandwidthExtension()
        var chunked = TelephoneBandwidthExtension()
        let pieces = stride(from: 0, to: signal.count, by: 321).flatMap { chunked.process(Array(signal[$0..<min($0 + 321, signal.count)])) }
        #expect(pieces == whole.process(signal))
    }
}
