import Testing
@testable import ParleyCore

/// Runs a turn detector over a pattern of 20 ms frames at 1 kHz and renders what it did.
///
/// Pattern characters: `.` probability 0, `~` probability 0.6, `#` probability 1. Each
/// sample's value is its index in the stream, so a commit shows exactly which audio it holds.
private func runTurns(
    _ pattern: String,
    configuration: TurnDetector.Configuration = .init(),
    before: [Int: (inout TurnDetector) -> Void] = [:]
) -> [String] {
    var detector = TurnDetector(sampleRate: 1_000, configuration: configuration)
    var log: [String] = []
    for (index, symbol) in pattern.enumerated() {
        before[index]?(&detector)
        let start = index * 20
        let frame = (start..<(start + 20)).map(Float.init)
        let probability: Float = symbol == "#" ? 1 : symbol == "~" ? 0.6 : 0
        for action in detector.process(probability: probability, frame: frame, at: start) {
            switch action {
            case .speechStarted(let startMs): log.append("\(index): started@\(startMs)")
            case .speechStopped(let endMs): log.append("\(index): stopped@\(endMs)")
            case .commit(let utterance):
                let contiguous = utterance.samples == (utterance.audioStartMs..<utterance.audioEndMs).map(Float.init)
                log.append("\(index): commit \(utterance.audioStartMs)..<\(utterance.audioEndMs)"
                    + (utterance.reachedMaximumLength ? " forced" : "") + (contiguous ? "" : " GARBLED"))
            case .idleTimeout(let startMs, let endMs): log.append("\(index): idle \(startMs)..<\(endMs)")
            case .judgeCompletion(_, let atMs): log.append("\(index): judge@\(atMs)")
            }
        }
    }
    return log
}

private func frames(_ parts: (Character, Int)...) -> String {
    parts.map { String(repeating: $0.0, count: $0.1) }.joined()
}

@Suite struct TurnDetectorTests {
    @Test func silenceDoesNothing() {
        #expect(runTurns(frames((".", 200))) == [])
    }

    @Test func oneTurnWithPrefixPaddingAndClosingSilence() {
        #expect(runTurns(frames((".", 20), ("#", 10), (".", 40))) == [
            "24: started@100", "54: stopped@1100", "54: commit 100..<1100",
        ])
    }

    @Test func prefixIsLimitedToTheAudioThereIs() {
        #expect(runTurns(frames((".", 5), ("#", 10), (".", 30))) == [
            "9: started@0", "39: stopped@800", "39: commit 0..<800",
        ])
    }

    @Test func clicksShorterThanMinimumSpeechAreDropped() {
        #expect(runTurns(frames((".", 20), ("#", 2), (".", 40))) == [])
    }

    @Test func syllablesWithShortGapsAddUpToTheMinimumSpeech() {
        #expect(runTurns(frames((".", 20), ("#", 2), (".", 6), ("#", 2), (".", 6), ("#", 2), (".", 40))) == [
            "36: started@100", "62: stopped@1260", "62: commit 100..<1260",
        ])
    }

    @Test func clicksFarApartNeverAddUp() {
        #expect(runTurns(frames((".", 20), ("#", 1), (".", 15), ("#", 1), (".", 15), ("#", 1), (".", 15), ("#", 1), (".", 15)))
            == [])
    }

    @Test func pausesShorterThanSilenceDurationKeepOneTurn() {
        #expect(runTurns(frames((".", 20), ("#", 10), (".", 10), ("#", 10), (".", 30))) == [
            "24: started@100", "74: stopped@1500", "74: commit 100..<1500",
        ])
    }

    @Test func zeroMinimumSpeechStartsOnTheFirstFrame() {
        var configuration = TurnDetector.Configuration()
        configuration.minimumSpeechMs = 0
        #expect(runTurns(frames((".", 20), ("#", 1), (".", 30)), configuration: configuration) == [
            "20: started@100", "45: stopped@920", "45: commit 100..<920",
        ])
    }

    @Test func maximumUtteranceForcesACommitAndSpeechContinuesInANewTurn() {
        var configuration = TurnDetector.Configuration()
        configuration.maximumUtteranceMs = 1_500
        #expect(runTurns(frames((".", 20), ("#", 70), (".", 30)), configuration: configuration) == [
            "24: started@100", "79: stopped@1600", "79: commit 100..<1600 forced",
            "84: started@1600", "114: stopped@2300", "114: commit 1600..<2300",
        ])
    }

    @Test func idleTimeoutFiresOnceAfterArming() {
        var configuration = TurnDetector.Configuration()
        configuration.idleTimeoutMs = 1_000
        #expect(runTurns(frames((".", 150)), configuration: configuration, before: [0: { $0.armIdleTimeout(at: 0) }])
            == ["49: idle 0..<1000"])
        #expect(runTurns(frames((".", 150)), configuration: configuration) == [])
        #expect(runTurns(frames((".", 150)), configuration: configuration, before: [
            0: { $0.armIdleTimeout(at: 0) }, 30: { $0.disarmIdleTimeout() },
        ]) == [])
    }

    @Test func speechCancelsTheIdleTimer() {
        var configuration = TurnDetector.Configuration()
        configuration.idleTimeoutMs = 1_000
        #expect(runTurns(frames((".", 20), ("#", 10), (".", 90)), configuration: configuration, before: [
            0: { $0.armIdleTimeout(at: 0) },
        ]) == ["24: started@100", "54: stopped@1100", "54: commit 100..<1100"])
    }

    @Test func reconfiguringBetweenFramesAppliesFromTheNextFrame() {
        #expect(runTurns(frames((".", 20), ("#", 10), (".", 30)), before: [
            30: { $0.configuration.silenceDurationMs = 200 },
        ]) == ["24: started@100", "39: stopped@800", "39: commit 100..<800"])
        #expect(runTurns(frames((".", 20), ("#", 10), (".", 40)), before: [
            0: { $0.configuration.prefixPaddingMs = 0 },
        ]) == ["24: started@400", "54: stopped@1100", "54: commit 400..<1100"])
    }

    @Test func thresholdDecidesWhatCountsAsSpeech() {
        let pattern = frames((".", 20), ("~", 10), (".", 40))
        #expect(runTurns(pattern) == ["24: started@100", "54: stopped@1100", "54: commit 100..<1100"])
        var strict = TurnDetector.Configuration()
        strict.threshold = 0.7
        #expect(runTurns(pattern, configuration: strict) == [])
    }

    @Test func resetDropsTheTurnInProgress() {
        #expect(runTurns(frames((".", 20), ("#", 10), (".", 40)), before: [27: { $0.reset() }]) == ["24: started@100"])
    }

    @Test func statesFollowTheTurn() {
        var detector = TurnDetector(sampleRate: 1_000)
        let frame = [Float](repeating: 0, count: 20)
        var states: [TurnDetector.State] = []
        for (index, probability) in [0, 1, 1, 1, 1, 1, 0, 1, 0].enumerated() {
            _ = detector.process(probability: Float(probability), frame: frame, at: index * 20)
            states.append(detector.state)
        }
        #expect(states == [.quiet, .starting, .starting, .starting, .starting, .speaking, .stopping, .speaking, .stopping])
    }
}
