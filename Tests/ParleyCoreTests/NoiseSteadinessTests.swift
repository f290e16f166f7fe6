import Foundation
import Testing
@testable import ParleyCore

/// How steady the quietest recent frames are: steady noise is suppressed, the rest is not.
@Suite struct NoiseSteadinessTests {
    @Test func aSteadyNoiseKeepsItsQuietestFramesTogether() {
        var steadiness = NoiseSteadiness()
        // A hiss whose frames' power wanders by ±0.2 dB.
        for index in 0..<NoiseSteadiness.minimumFrames - 1 { steadiness.add(power: 1e-3 * pow(10, 0.02 * Double(index % 3 - 1))) }
        #expect(steadiness.spreadDB == nil)
        steadiness.add(power: 1e-3)
        #expect((steadiness.spreadDB ?? .infinity) < 0.5)
    }

    @Test func noiseThatComesAndGoesDoesNot() {
        var steadiness = NoiseSteadiness()
        // Babble: frames 0 to 12 dB over the quietest.
        for index in 0..<60 { steadiness.add(power: 1e-4 * pow(10, Double(index % 13) / 10)) }
        #expect((steadiness.spreadDB ?? 0) >= 1)
    }

    @Test func onlyTheLastThreeSecondsCount() {
        var steadiness = NoiseSteadiness()
        for index in 0..<60 { steadiness.add(power: 1e-4 * pow(10, Double(index % 13) / 10)) }
        for _ in 0..<NoiseSteadiness.windowFrames { steadiness.add(power: 1e-3) }
        #expect(steadiness.spreadDB == 0)
    }
}
