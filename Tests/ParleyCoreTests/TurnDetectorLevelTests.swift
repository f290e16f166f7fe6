import Testing
@testable import ParleyCore

/// The turn detector times the closing silence from where the voice stopped, even while the
/// VAD still scores the fading audio as speech. 16 kHz, 32 ms frames (512 samples), as with Silero.
@Suite struct TurnDetectorLevelTests {
    private static let rate = 16_000
    private static let frameLength = 512
    private static let loud: Float = 0.3
    /// 60 dB below `loud`: far quieter than the 40 dB the detector allows by default.
    private static let faint: Float = 0.0003

    /// A frame whose first `loudSamples` samples are a loud tone and the rest faint.
    private static func frame(loudSamples: Int) -> [Float] {
        (0..<frameLength).map { index in
            let amplitude = index < loudSamples ? loud : faint
            return amplitude * Float(index % 2 == 0 ? 1 : -1)
        }
    }

    /// Feeds ten loud frames, then `fading` frames the VAD still scores as speech although the
    /// voice ended with the first of them after `voicedSamples` samples, then frames the VAD
    /// scores as silence. Returns the `speechStopped` time and the frame index it came at.
    private static func stopTime(
        voicedSamples: Int, fading: Int, configuration: TurnDetector.Configuration
    ) -> (endMs: Int, frame: Int)? {
        var detector = TurnDetector(sampleRate: rate, configuration: configuration)
        for index in 0..<40 {
            let samples: [Float]
            let probability: Float
            switch index {
            case ..<10: (samples, probability) = (frame(loudSamples: frameLength), 0.9)
            case 10: (samples, probability) = (frame(loudSamples: voicedSamples), 0.9)
            case ..<(10 + fading): (samples, probability) = (frame(loudSamples: 0), 0.9)
            default: (samples, probability) = (frame(loudSamples: 0), 0.1)
            }
            for action in detector.process(probability: probability, frame: samples, at: index * 32) {
                if case .speechStopped(let endMs) = action { return (endMs, index) }
            }
        }
        return nil
    }

    @Test func theSilenceIsTimedFromWhereTheVoiceStoppedNotFromTheVAD() throws {
        var configuration = TurnDetector.Configuration(silenceDurationMs: 300)
        // The voice stops 10 ms into frame 10 (at 330 ms); the VAD says speech until frame 14.
        let gated = try #require(Self.stopTime(voicedSamples: 160, fading: 4, configuration: configuration))
        #expect(gated.endMs >= 330 + 300)
        #expect(gated.endMs < 330 + 300 + 32)

        configuration.quietBelowPeakDB = nil
        let vadOnly = try #require(Self.stopTime(voicedSamples: 160, fading: 4, configuration: configuration))
        #expect(vadOnly.endMs >= 14 * 32 + 300)
    }

    @Test func quietPartsBetweenWordsDoNotEndTheTurn() {
        var detector = TurnDetector(sampleRate: Self.rate, configuration: .init(silenceDurationMs: 300))
        var stops = 0
        // Loud for 5 frames, faint for 5 (160 ms, shorter than the window), loud again, then silence.
        let pattern = Array(repeating: Self.frameLength, count: 5) + Array(repeating: 0, count: 5)
            + Array(repeating: Self.frameLength, count: 5) + Array(repeating: 0, count: 20)
        for (index, loudSamples) in pattern.enumerated() {
            for action in detector.process(probability: 0.9, frame: Self.frame(loudSamples: loudSamples), at: index * 32) {
                if case .speechStopped(let endMs) = action {
                    stops += 1
                    #expect(endMs >= 15 * 32 + 300)
                }
            }
        }
        #expect(stops == 1)
    }

    @Test func aQuietPartialFrameEndsTheTurnAsSoonAsTheSilenceIsComplete() {
        var detector = TurnDetector(sampleRate: Self.rate, configuration: .init(silenceDurationMs: 300))
        for index in 0..<10 {
            _ = detector.process(probability: 0.9, frame: Self.frame(loudSamples: Self.frameLength), at: index * 32)
        }
        // The voice stopped at 320 ms; whole faint frames up to 608 ms are not yet 300 ms of silence.
        for index in 10..<19 {
            #expect(detector.process(probability: 0.9, frame: Self.frame(loudSamples: 0), at: index * 32).isEmpty)
        }
        let faintTail = [Float](repeating: Self.faint, count: 320)
        #expect(detector.processPartialFrame(Array(faintTail.prefix(160)), at: 608).isEmpty, "2 ms short of the window")
        #expect(detector.processPartialFrame([Float](repeating: Self.loud, count: 320), at: 608).isEmpty, "a voice is back")
        let actions = detector.processPartialFrame(faintTail, at: 608)
        #expect(actions.first == .speechStopped(audioEndMs: 628))
        guard case .commit(let utterance)? = actions.last else {
            Issue.record("no commit after the stop: \(actions)")
            return
        }
        #expect(utterance.audioEndMs == 628)
        #expect(detector.state == .quiet)
    }

    @Test func partialFramesNeverEndATurnWithoutTheLevelCheck() {
        var detector = TurnDetector(sampleRate: Self.rate, configuration: .init(silenceDurationMs: 300, quietBelowPeakDB: nil))
        for index in 0..<10 {
            _ = detector.process(probability: 0.9, frame: Self.frame(loudSamples: Self.frameLength), at: index * 32)
        }
        for index in 10..<19 {
            _ = detector.process(probability: 0.1, frame: Self.frame(loudSamples: 0), at: index * 32)
        }
        #expect(detector.state == .stopping)
        #expect(detector.processPartialFrame([Float](repeating: 0, count: 320), at: 608).isEmpty)
    }
}

extension TurnDetectorLevelTests {
    /// A resampler holding back its last millisecond does not make the turn wait for the next chunk.
    @Test func inputHeldBackByAResamplerCountsAsHeard() {
        var detector = TurnDetector(sampleRate: Self.rate, configuration: .init(silenceDurationMs: 300))
        for index in 0..<10 {
            _ = detector.process(probability: 0.9, frame: Self.frame(loudSamples: Self.frameLength), at: index * 32)
        }
        for index in 10..<19 {
            _ = detector.process(probability: 0.9, frame: Self.frame(loudSamples: 0), at: index * 32)
        }
        let faint = [Float](repeating: Self.faint, count: 160)  // up to 618 ms of the 621 that arrived
        #expect(detector.processPartialFrame(faint, at: 608).count == 0)
        #expect(detector.processPartialFrame(faint, at: 608, heardThroughMs: 621).first == .speechStopped(audioEndMs: 621))
    }
}
