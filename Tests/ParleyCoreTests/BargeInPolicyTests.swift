import Testing
@testable import ParleyCore

/// Runs a barge-in policy over 20 ms frames and returns the end times of frames that interrupted.
///
/// Pattern characters: `.` probability 0, `~` probability 0.6, `#` probability 0.9.
private func interruptions(
    _ pattern: String,
    agent: BargeInPolicy.AgentActivity = .speaking,
    configuration: BargeInPolicy.Configuration = .init(),
    agentAt: [Int: BargeInPolicy.AgentActivity] = [:]
) -> [Int] {
    var policy = BargeInPolicy(configuration: configuration)
    var activity = agent
    var result: [Int] = []
    for (index, symbol) in pattern.enumerated() {
        activity = agentAt[index] ?? activity
        let probability: Float = symbol == "#" ? 0.9 : symbol == "~" ? 0.6 : 0
        let endMs = (index + 1) * 20
        if policy.process(probability: probability, agent: activity, at: endMs) == .interrupt { result.append(endMs) }
    }
    return result
}

private func frames(_ parts: (Character, Int)...) -> String {
    parts.map { String(repeating: $0.0, count: $0.1) }.joined()
}

@Suite struct BargeInPolicyTests {
    @Test func sustainedSpeechDuringPlaybackInterruptsOnceAfterMinimumDuration() {
        // Speech from 200 ms; 250 ms later (450 ms, rounded up to the frame end 460 ms) it interrupts.
        #expect(interruptions(frames((".", 10), ("#", 40))) == [460])
    }

    @Test func shortSoundsDoNotInterrupt() {
        #expect(interruptions(frames((".", 10), ("#", 10), (".", 10), ("#", 10), (".", 10))) == [])
    }

    @Test func shortGapsDoNotRestartTheCount() {
        #expect(interruptions(frames((".", 10), ("#", 8), (".", 4), ("#", 8), (".", 10))) == [460])
        #expect(interruptions(frames((".", 10), ("#", 8), (".", 6), ("#", 8), (".", 10))) == [])
    }

    @Test func echoGuardRaisesTheThresholdOnlyWhilePlaying() {
        let pattern = frames((".", 10), ("~", 40))
        #expect(interruptions(pattern, agent: .speaking) == [])
        #expect(interruptions(pattern, agent: .thinking) == [460])
    }

    @Test func nothingInterruptsAnIdleAgent() {
        #expect(interruptions(frames((".", 10), ("#", 40)), agent: .idle) == [])
    }

    @Test func coolDownSuppressesRepeatedInterruptions() {
        // First interruption at 460 ms; the 1000 ms cool-down keeps frames ending before 1460
        // out; speech counted afresh from the frame 1440–1460 interrupts at 1700.
        #expect(interruptions(frames((".", 10), ("#", 90))) == [460, 1_700])
        var longer = BargeInPolicy.Configuration()
        longer.cooldownMs = 5_000
        #expect(interruptions(frames((".", 10), ("#", 90)), configuration: longer) == [460])
    }

    @Test func speechBeforeTheAgentStartsDoesNotCount() {
        #expect(interruptions(frames(("#", 20), ("#", 20)), agent: .idle, agentAt: [20: .speaking]) == [660])
    }

    @Test func resetForgetsCoolDown() {
        var policy = BargeInPolicy()
        var decisions: [BargeInPolicy.Action] = []
        for index in 0..<20 { decisions.append(policy.process(probability: 1, agent: .speaking, at: (index + 1) * 20)) }
        policy.reset()
        for index in 20..<40 { decisions.append(policy.process(probability: 1, agent: .speaking, at: (index + 1) * 20)) }
        #expect(decisions.filter { $0 == .interrupt }.count == 2)
    }
}
