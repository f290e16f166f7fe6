import BenchmarkHarness
import Testing

@Suite struct ConversationCapacityTrialTests {
    private func trial(sessions: Int = 2, latencies: [Double], cpuSeconds: Double = 30, elapsedSeconds: Double = 60) -> ConversationCapacityTrial {
        ConversationCapacityTrial(
            sessions: sessions, questionsPerSession: 3, latenciesMs: latencies, p90LimitMs: 1_500,
            cpuSeconds: cpuSeconds, elapsedSeconds: elapsedSeconds
        )
    }

    @Test func holdsWhenEveryQuestionIsAnsweredWithinTheLimit() {
        let within = trial(latencies: [600, 700, 800, 900, 1_000, 1_500])
        #expect(within.answered == within.questionsAsked)
        #expect(within.p90 == 1_500)
        #expect(within.held)
    }

    @Test func failsWhenTheP90IsOverTheLimit() {
        #expect(!trial(latencies: [600, 700, 800, 900, 1_000, 1_501]).held)
    }

    @Test func failsWhenAQuestionWentUnanswered() {
        let unanswered = trial(latencies: [600, 700, 800, 900, 1_000])
        #expect(unanswered.answered == 5)
        #expect(unanswered.questionsAsked == 6)
        #expect(!unanswered.held)
    }

    @Test func failsWhenNothingWasAnswered() {
        #expect(trial(latencies: []).p90.isNaN)
        #expect(!trial(latencies: []).held)
    }

    @Test func theP90OfManyTurnsForgivesTheSlowestTenth() {
        // 4 sessions × 3 questions: the nearest-rank p90 of 12 is the 11th, so one slow turn passes.
        let slowOnce = trial(sessions: 4, latencies: Array(repeating: 800, count: 11) + [4_000])
        #expect(slowOnce.p90 == 800)
        #expect(slowOnce.held)
    }

    @Test func cpuPerSessionIsTheTrialsShareOfOneCoreSplitOverItsSessions() {
        #expect(trial(latencies: [800], cpuSeconds: 30, elapsedSeconds: 60).cpuShareOfOneCorePerSession == 0.25)
        #expect(trial(latencies: [], elapsedSeconds: 0).cpuShareOfOneCorePerSession.isNaN)
    }

    @Test func sessionsAskDifferentQuestionsUntilTheListRunsOut() {
        #expect(ConversationCapacityTrial.questionIndices(session: 0, questionsPerSession: 3, available: 12) == [0, 1, 2])
        #expect(ConversationCapacityTrial.questionIndices(session: 3, questionsPerSession: 3, available: 12) == [9, 10, 11])
        #expect(ConversationCapacityTrial.questionIndices(session: 4, questionsPerSession: 3, available: 12) == [0, 1, 2])
        #expect(ConversationCapacityTrial.questionIndices(session: 2, questionsPerSession: 5, available: 12) == [10, 11, 0, 1, 2])
        #expect(ConversationCapacityTrial.questionIndices(session: 1, questionsPerSession: 3, available: 0) == [])
    }
}
