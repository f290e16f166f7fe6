import Foundation
import Testing
@testable import ParleyCore

@Suite struct LevelMeterTests {
    @Test func rmsAndPeakOfAFullScaleSine() {
        let sine = TestSignal.tone(frequency: 1_000, amplitude: 1, count: 1_600, sampleRate: 16_000)
        var meter = LevelMeter(sampleRate: 16_000)
        let reading = meter.process(sine)
        #expect(abs(reading.rmsDBFS - -3.0103) < 0.01)
        #expect(abs(reading.peakDBFS) < 0.01)
    }

    @Test func levelsOfKnownAmplitudes() {
        #expect(LevelMeter.dBFS(amplitude: 0.1) == -20)
        #expect(LevelMeter.dBFS(amplitude: 0) == LevelMeter.silenceDBFS)
        #expect(LevelMeter.dBFS(amplitude: 1e-9) == LevelMeter.silenceDBFS)
        #expect(LevelMeter.rms([]) == 0)
        #expect(LevelMeter.peak([0.5, -0.75, 0.25]) == 0.75)
    }

    @Test func smoothedLevelRisesFastAndFallsSlowly() {
        var meter = LevelMeter(sampleRate: 1_000, attackMilliseconds: 20, releaseMilliseconds: 200, floorDBFS: -60)
        let loud = [Float](repeating: 0.1, count: 20)
        let silent = [Float](repeating: 0, count: 20)
        // -20 dBFS maps to (−20 + 60) / 60 = 2/3. After one attack time constant: 63 % of the way.
        let first = meter.process(loud).level
        #expect(abs(first - 2.0 / 3 * (1 - exp(-1))) < 0.001)
        for _ in 0..<10 { _ = meter.process(loud) }
        #expect(abs(meter.level - 2.0 / 3) < 0.001)
        // Release: one 20 ms frame of silence keeps exp(−20/200) of the level.
        let released = meter.process(silent).level
        #expect(abs(released - 2.0 / 3 * Float(exp(-0.1))) < 0.001)
        for _ in 0..<100 { _ = meter.process(silent) }
        #expect(meter.level < 0.001)
        meter.reset()
        #expect(meter.level == 0)
    }

    @Test func levelIsClampedToZeroAndOne() {
        var meter = LevelMeter(sampleRate: 1_000, attackMilliseconds: 0, releaseMilliseconds: 0)
        #expect(meter.process([Float](repeating: 2, count: 10)).level == 1)
        #expect(meter.process([Float](repeating: 0.0001, count: 10)).level == 0)
    }
}
