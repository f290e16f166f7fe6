import Foundation

/// How one caller turn went: what was seen and which expectations held.
struct TurnResult: Sendable, Hashable {
    /// The turn's number in its scenario, from 1.
    var number: Int
    /// The turn's kind: `say`, `wav`, `text`, `keys`, `interrupt` or `backchannel`.
    var kind: String
    /// The turn's line in its file.
    var line: Int
    /// The words the caller meant, when known before the server heard them.
    var said: String?
    /// What was seen; `nil` when the turn did not run (an earlier one failed).
    var observation: TurnObservation?
    /// Each expectation's outcome, in the file's order.
    var outcomes: [ExpectationOutcome]

    /// Whether the turn ran to its end and every expectation held.
    var passed: Bool {
        observation != nil && observation?.failure == nil && outcomes.allSatisfy(\.passed)
    }

    /// Why the turn failed, in one line; `nil` when it passed.
    var failureReason: String? {
        guard let observation else { return "not run: an earlier turn failed" }
        if let failure = observation.failure { return failure }
        return outcomes.first(where: { !$0.passed }).map { "\($0.expectation): \($0.reason)" }
    }
}

/// One run of a scenario.
struct ScenarioRun: Sendable, Hashable {
    /// The scenario's name.
    var scenario: String
    /// Which repeat this is, from 1.
    var repeatNumber: Int
    /// The turns, in order.
    var turns: [TurnResult]
    /// The judge's verdict, when the scenario asks for one and the turns ran.
    var judge: JudgeVerdict?
    /// Why the conversation could not be held (the session refused), if it could not.
    var failure: String?
    /// The whole run, wall clock.
    var durationMs: Int

    /// Whether the conversation was held, every turn passed and the judge (if any) passed it.
    var passed: Bool {
        failure == nil && turns.allSatisfy(\.passed) && (judge?.passed ?? true)
    }

    /// Why the run failed, naming the turn, in one line; `nil` when it passed.
    var failureReason: String? {
        if let failure { return failure }
        if let turn = turns.first(where: { !$0.passed }), let reason = turn.failureReason { return "turn \(turn.number): \(reason)" }
        if let judge, !judge.passed { return "judge: \(judge.reason)" }
        return nil
    }
}

/// What the judge made of a conversation.
struct JudgeVerdict: Sendable, Hashable {
    /// The score, from 0 to 10; `nil` when the judge gave none.
    var score: Double?
    /// The lowest passing score.
    var passScore: Double
    /// The judge's reason, or why it could not judge.
    var reason: String

    /// Whether the score reached the pass score.
    var passed: Bool { (score ?? -1) >= passScore }
}

/// The runs of the scenarios of one file.
struct ScenarioFileResult: Sendable, Hashable {
    /// The file as given.
    var path: String
    /// Every run, scenario by scenario, repeats together.
    var runs: [ScenarioRun]

    /// How reports name `run`: the scenario's name, with `#2` and so on when it ran repeatedly.
    func name(of run: ScenarioRun) -> String {
        runs.contains(where: { $0.scenario == run.scenario && $0.repeatNumber > 1 }) ? "\(run.scenario) #\(run.repeatNumber)" : run.scenario
    }
}

/// Pass counts as people read them: `3/5 passed (60 %)`.
struct PassRate: Sendable, Hashable, CustomStringConvertible {
    var passed: Int
    var total: Int

    /// The runs' pass rate.
    init(_ runs: [ScenarioRun]) {
        passed = runs.filter(\.passed).count
        total = runs.count
    }

    /// The share that passed, from 0 to 1 (1 for nothing run).
    var fraction: Double { total == 0 ? 1 : Double(passed) / Double(total) }

    var description: String { "\(passed)/\(total) passed (\(Int((fraction * 100).rounded())) %)" }
}
