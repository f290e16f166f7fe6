import Testing
@testable import ParleyCore

/// The echo residue gate as a table: levels of the cancelled input and of what played, frame
/// by frame (32 ms), and whether each frame was taken for echo.
@Suite struct EchoResidueGateTests {
    /// Runs the gate over `(input, played)` level pairs.
    private func gated(_ frames: [(input: Float, played: Float)]) -> [Bool] {
        var gate = EchoResidueGate(frameMs: 32)
        return frames.map { gate.isEcho(inputLevel: $0.input, playedLevel: $0.played) }
    }

    @Test func withNothingPlayingNothingIsEcho() {
        #expect(gated(Array(repeating: (0.1, 0), count: 20)).allSatisfy { !$0 })
    }

    @Test func theResidueAtItsUsualLevelIsEchoAndTheUserAboveItIsNot() {
        // 2 s of the agent at 0.3 leaking back at -20 dB (0.03, varying by a few dB), then the
        // user at 0.2 over it: the echo is gated, the user is not.
        let echo = (0..<62).map { (input: Float(0.03) * (1 + Float($0 % 3) * 0.3), played: Float(0.3)) }
        let user = Array(repeating: (input: Float(0.2), played: Float(0.3)), count: 10)
        let verdicts = gated(echo + user)
        #expect(verdicts.prefix(62).allSatisfy { $0 })
        #expect(verdicts.suffix(10).allSatisfy { !$0 })
    }

    @Test func untilThePlaybackWasMeasuredEveryPlayingFrameCountsAsEcho() {
        // The first 256 ms (8 frames) of playback, whatever their level; once the echo's usual
        // level is known, the same level is the user.
        let loud = Array(repeating: (input: Float(0.5), played: Float(0.3)), count: 8)
        let echo = Array(repeating: (input: Float(0.03), played: Float(0.3)), count: 30)
        let verdicts = gated(loud + echo + loud)
        #expect(verdicts.prefix(38).allSatisfy { $0 })
        #expect(verdicts.suffix(8).allSatisfy { !$0 })
    }

    @Test func theEchoPathOutlastsThePlaybackByAQuarterSecond() {
        // The agent stops: for 250 ms its echo may still come back, then nothing is gated.
        let echo = Array(repeating: (input: Float(0.03), played: Float(0.3)), count: 30)
        let after = Array(repeating: (input: Float(0.03), played: Float(0)), count: 12)
        let verdicts = gated(echo + after)
        #expect(verdicts[30..<38].allSatisfy { $0 })
        #expect(verdicts.suffix(3).allSatisfy { !$0 })
    }
}
