import Testing
@testable import ParleyCore

/// `semantic_vad` in the turn detector: pauses are judged by a model, whose verdict ends the
/// turn where the pause was judged or lets it wait up to the eagerness' maximum silence.
@Suite struct SemanticTurnDetectorTests {
    /// 20 ms frames at 1 kHz: `speechMs` of speech, then silence; `verdict` is given the
    /// moment a judgement is asked for (nil: never). Returns the judged time and where the turn ended.
    private func run(eagerness: ServerVADSettings.Eagerness, speechMs: Int = 600, silenceMs: Int, verdict: Float?) -> (judgedAtMs: Int?, endedAtMs: Int?, samples: Int?) {
        var detector = TurnDetector(sampleRate: 1_000, configuration: .init(quietBelowPeakDB: nil, completionCheck: eagerness.completionCheck))
        var judgedAt: Int?, endedAt: Int?, samples: Int?
        for start in stride(from: 0, to: speechMs + silenceMs, by: 20) {
            var actions = detector.process(probability: start < speechMs ? 1 : 0, frame: [Float](repeating: 0.5, count: 20), at: start)
            while !actions.isEmpty {
                let action = actions.removeFirst()
                switch action {
                case .judgeCompletion(_, let atMs):
                    judgedAt = atMs
                    if let verdict { actions += detector.completionJudged(probability: verdict, atMs: atMs) }
                case .commit(let utterance):
                    endedAt = utterance.audioEndMs
                    samples = utterance.samples.count
                default: break
                }
            }
            if endedAt != nil { break }
        }
        return (judgedAt, endedAt, samples)
    }

    @Test(arguments: ServerVADSettings.Eagerness.allCases)
    func aCompleteTurnEndsWhereThePauseWasJudged(eagerness: ServerVADSettings.Eagerness) {
        let result = run(eagerness: eagerness, silenceMs: 10_000, verdict: 0.9)
        #expect(result.judgedAtMs == 800 && result.endedAtMs == 800)
        #expect(result.samples == 800)  // the turn's audio up to the judged point, nothing after
    }

    @Test(arguments: [(ServerVADSettings.Eagerness.low, 8_600), (.medium, 4_600), (.auto, 4_600), (.high, 2_600)])
    func anIncompleteTurnWaitsForTheEagernessMaximum(eagerness: ServerVADSettings.Eagerness, endMs: Int) {
        #expect(run(eagerness: eagerness, silenceMs: 10_000, verdict: 0.1).endedAtMs == endMs)
        // No verdict yet: the same maximum.
        #expect(run(eagerness: eagerness, silenceMs: 10_000, verdict: nil).endedAtMs == endMs)
    }

    @Test func eagernessSetsHowSureTheModelMustBe() {
        #expect(run(eagerness: .high, silenceMs: 10_000, verdict: 0.4).endedAtMs == 800)
        #expect(run(eagerness: .medium, silenceMs: 10_000, verdict: 0.4).endedAtMs == 4_600)
        #expect(run(eagerness: .low, silenceMs: 10_000, verdict: 0.6).endedAtMs == 8_600)
    }

    @Test(arguments: ServerVADSettings.Eagerness.allCases, [true, false])
    func wordsThatSayTheThoughtIsCompleteShortenTheWait(eagerness: ServerVADSettings.Eagerness, lastWordIsSure: Bool) {
        var detector = TurnDetector(sampleRate: 1_000, configuration: .init(quietBelowPeakDB: nil, completionCheck: eagerness.completionCheck))
        var endedAt: Int?
        for start in stride(from: 0, to: 10_000, by: 20) where endedAt == nil {
            for action in detector.process(probability: start < 600 ? 1 : 0, frame: [Float](repeating: 0.5, count: 20), at: start) {
                switch action {
                case .judgeCompletion(_, let atMs):
                    #expect(detector.completionJudged(probability: 0.01, atMs: atMs).isEmpty)
                    detector.wordsJudgedComplete(atMs: atMs, lastWordIsSure: lastWordIsSure)
                case .commit(let utterance): endedAt = utterance.audioEndMs
                default: break
                }
            }
        }
        let check = eagerness.completionCheck
        #expect(endedAt == 600 + (lastWordIsSure ? check.completeByWordsSilenceMs : check.maximumSilenceMs / 2))
        #expect(check.completeByWordsSilenceMs <= check.doubtfulWordsSilenceMs)
    }

    @Test func speechAfterThePauseBringsBackTheFullWait() {
        var detector = TurnDetector(sampleRate: 1_000, configuration: .init(quietBelowPeakDB: nil, completionCheck: ServerVADSettings.Eagerness.auto.completionCheck))
        var endedAt: Int?
        // 600 ms of speech, a judged pause whose words say complete, more speech from 1,000 ms to 1,400 ms.
        for start in stride(from: 0, to: 10_000, by: 20) where endedAt == nil {
            let speaking = start < 600 || (1_000..<1_400).contains(start)
            for action in detector.process(probability: speaking ? 1 : 0, frame: [Float](repeating: 0.5, count: 20), at: start) {
                switch action {
                case .judgeCompletion(_, let atMs) where atMs < 1_000: detector.wordsJudgedComplete(atMs: atMs)
                case .commit(let utterance): endedAt = utterance.audioEndMs
                default: break
                }
            }
        }
        #expect(endedAt == 1_400 + 4_000)
    }

    @Test func aVerdictOnAPauseTheSpeakerEndedChangesNothing() {
        var detector = TurnDetector(sampleRate: 1_000, configuration: .init(quietBelowPeakDB: nil, completionCheck: ServerVADSettings.Eagerness.auto.completionCheck))
        var judged: [Int] = []
        let pattern = Array(repeating: Float(1), count: 20) + Array(repeating: 0, count: 15) + Array(repeating: 1, count: 10) + Array(repeating: 0, count: 5)
        for (index, probability) in pattern.enumerated() {
            for case .judgeCompletion(_, let atMs) in detector.process(probability: probability, frame: [Float](repeating: 0.5, count: 20), at: index * 20) {
                judged.append(atMs)
            }
        }
        #expect(judged == [600])
        #expect(detector.completionJudged(probability: 1, atMs: 600).isEmpty)
        #expect(detector.state == TurnDetector.State.stopping)
    }
}
