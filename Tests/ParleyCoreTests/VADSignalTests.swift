import Testing
@testable import ParleyCore

/// Frame-level accuracy of a detector on a burst scene.
private struct Accuracy {
    /// Share of frames fully inside bursts where the signal is at least 9.5 dB over the noise
    /// (syllable troughs of speech-like bursts are quieter) that are marked as speech.
    var detection: Double
    /// Share of frames fully outside bursts (after a settling time) marked as speech.
    var falseAlarm: Double
}

private func measure(_ scene: BurstScene, settleMs: Int = 300) -> Accuracy {
    var vad = EnergyVAD(sampleRate: scene.sampleRate)
    var hits = 0, inside = 0, alarms = 0, outside = 0
    let settle = scene.sampleRate * settleMs / 1000
    for (start, frame) in scene.frames(length: vad.frameLength) {
        let speech = vad.speechProbability(of: frame) >= 0.5
        let range = start..<(start + frame.count)
        if scene.bursts.contains(where: { $0.contains(range.lowerBound) && $0.contains(range.upperBound - 1) }) {
            guard scene.localSNR(range) >= 9.5 else { continue }
            inside += 1
            if speech { hits += 1 }
        } else if !scene.bursts.contains(where: { $0.overlaps(range) }), start >= settle {
            outside += 1
            if speech { alarms += 1 }
        }
    }
    return Accuracy(detection: Double(hits) / Double(max(inside, 1)), falseAlarm: Double(alarms) / Double(max(outside, 1)))
}

private func tone(count: Int, generator: inout SeededGenerator) -> [Float] {
    TestSignal.tone(frequency: 440, amplitude: 1, count: count, sampleRate: 16_000)
}

private func speechLike(count: Int, generator: inout SeededGenerator) -> [Float] {
    TestSignal.speechLikeNoise(count: count, sampleRate: 16_000, using: &generator)
}

@Suite struct VADSignalTests {
    @Test(arguments: [20, 10] as [Float])
    func toneBurstsInWhiteNoise(snrDB: Float) {
        let accuracy = measure(BurstScene.make(burst: tone, snrDB: snrDB))
        #expect(accuracy.detection >= 0.95)
        #expect(accuracy.falseAlarm <= 0.02)
    }

    @Test(arguments: [20, 10] as [Float])
    func speechLikeBurstsInWhiteNoise(snrDB: Float) {
        let accuracy = measure(BurstScene.make(burst: speechLike, snrDB: snrDB, seed: 3))
        #expect(accuracy.detection >= 0.95)
        #expect(accuracy.falseAlarm <= 0.02)
    }

    @Test func zeroDBSNRRaisesNoFalseAlarms() {
        // At 0 dB the signal adds only 3 dB to the noise: energy cannot find it (Silero can),
        // but the adaptive floor must not mistake the noise for speech either.
        let accuracy = measure(BurstScene.make(burst: speechLike, snrDB: 0, seed: 5))
        #expect(accuracy.falseAlarm <= 0.02)
    }

    @Test func fixedThresholdFailsWhereTheAdaptiveFloorHolds() {
        // Loud room noise at −30 dBFS, speech 10 dB above it.
        let scene = BurstScene.make(burst: speechLike, snrDB: 10, noiseRMS: 0.0316, seed: 9)
        var fixedAlarms = 0, gapFrames = 0
        for (start, frame) in scene.frames(length: 320) where !scene.bursts.contains(where: { $0.contains(start) }) {
            gapFrames += 1
            if LevelMeter.dBFS(amplitude: LevelMeter.rms(frame)) > -35 { fixedAlarms += 1 }
        }
        #expect(Double(fixedAlarms) / Double(gapFrames) > 0.9)
        let adaptive = measure(scene)
        #expect(adaptive.falseAlarm <= 0.02)
        #expect(adaptive.detection >= 0.95)
    }

    @Test func floorFollowsTheNoiseUpAndDown() {
        var generator = SeededGenerator(seed: 11)
        var vad = EnergyVAD()
        func feed(rms: Float, seconds: Int) -> [Float] {
            TestSignal.whiteNoise(rms: rms, count: 16_000 * seconds, using: &generator)
                .chunked(320).map { vad.speechProbability(of: $0) }
        }
        _ = feed(rms: 0.003, seconds: 3)
        #expect(abs(vad.noiseFloorDBFS! - -50.5) < 2)
        // Noise jumps 20 dB: briefly mistaken for speech, then the floor catches up.
        let louder = feed(rms: 0.03, seconds: 4)
        #expect(abs(vad.noiseFloorDBFS! - -30.5) < 2)
        #expect(louder.suffix(50).allSatisfy { $0 < 0.5 })
        // Noise drops again: the floor follows at once.
        _ = feed(rms: 0.003, seconds: 1)
        #expect(abs(vad.noiseFloorDBFS! - -50.5) < 2)
    }

    @Test func digitalSilenceIsNeverSpeechAndResetForgets() {
        var vad = EnergyVAD()
        let silence = [Float](repeating: 0, count: 320)
        for _ in 0..<100 { #expect(vad.speechProbability(of: silence) == 0) }
        let beep = TestSignal.tone(frequency: 440, amplitude: 0.1, count: 320, sampleRate: 16_000)
        #expect(vad.speechProbability(of: beep) > 0.99)
        // Very quiet sound over digital silence stays below the absolute minimum.
        let whisper = TestSignal.tone(frequency: 440, amplitude: 0.0005, count: 320, sampleRate: 16_000)
        #expect(vad.speechProbability(of: whisper) == 0)
        vad.reset()
        #expect(vad.noiseFloorDBFS == nil)
    }

    @Test func hummingDCAndRumbleAreFilteredOut() {
        var vad = EnergyVAD()
        var generator = SeededGenerator(seed: 13)
        let quietNoise = TestSignal.whiteNoise(rms: 0.002, count: 16_000, using: &generator)
        for frame in quietNoise.chunked(320) { _ = vad.speechProbability(of: frame) }
        let offset = [Float](repeating: 0.3, count: 16_000).enumerated().map { $0.element + quietNoise[$0.offset] }
        let probabilities = offset.chunked(320).map { vad.speechProbability(of: $0) }
        #expect(probabilities.dropFirst(2).allSatisfy { $0 < 0.5 })
    }
}

@Suite struct TurnDetectorSignalTests {
    /// Turns found by the energy VAD and a turn detector in a scene: (start, end) in ms.
    private func turns(in scene: BurstScene) -> [(start: Int, end: Int)] {
        var vad = EnergyVAD(sampleRate: scene.sampleRate)
        var detector = TurnDetector(sampleRate: scene.sampleRate)
        var result: [(start: Int, end: Int)] = []
        for (start, frame) in scene.frames(length: vad.frameLength) {
            let probability = vad.speechProbability(of: frame)
            for action in detector.process(probability: probability, frame: frame, at: start * 1000 / scene.sampleRate) {
                if case .commit(let utterance) = action {
                    #expect(utterance.samples.count == (utterance.audioEndMs - utterance.audioStartMs) * 16)
                    result.append((utterance.audioStartMs, utterance.audioEndMs))
                }
            }
        }
        return result
    }

    @Test(arguments: [20, 10] as [Float])
    func oneTurnPerSpeechLikeBurst(snrDB: Float) {
        let scene = BurstScene.make(burst: speechLike, snrDB: snrDB, seed: 21)
        let found = turns(in: scene)
        #expect(found.count == scene.bursts.count)
        for (turn, burst) in zip(found, scene.bursts) {
            let burstStartMs = burst.lowerBound / 16, burstEndMs = burst.upperBound / 16
            #expect(abs(turn.start - (burstStartMs - 300)) <= 60, "start \(turn.start) for burst at \(burstStartMs)")
            #expect(abs(turn.end - (burstEndMs + 500)) <= 100, "end \(turn.end) for burst ending \(burstEndMs)")
        }
    }

    @Test func oneTurnPerToneBurstAt10dB() {
        let scene = BurstScene.make(burst: tone, snrDB: 10, seed: 22)
        #expect(turns(in: scene).count == scene.bursts.count)
    }

    @Test func noiseAloneAt0dBSceneLevelsMakesNoTurns() {
        let noiseOnly = BurstScene.make(burst: speechLike, snrDB: -200, burstCount: 5, seed: 23)
        #expect(turns(in: noiseOnly).isEmpty)
        // With 0 dB bursts, whatever is found lies on a burst: never a turn in the noise.
        let scene = BurstScene.make(burst: speechLike, snrDB: 0, seed: 24)
        for turn in turns(in: scene) {
            #expect(scene.bursts.contains { ($0.lowerBound / 16 - 400...$0.upperBound / 16 + 600).contains(turn.start) })
        }
    }
}

extension Array {
    /// Consecutive pieces of `size` elements (a shorter last piece is dropped).
    func chunked(_ size: Int) -> [[Element]] {
        stride(from: 0, through: count - size, by: size).map { Array(self[$0..<($0 + size)]) }
    }
}
