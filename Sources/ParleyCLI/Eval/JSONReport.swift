import Foundation
import ParleyCore

/// An eval as JSON: every run with each turn's transcript (what the server heard, what the
/// agent replied), tool calls, handoffs, timings and expectation outcomes.
enum JSONReport {
    /// The report of `results`.
    static func json(_ results: [ScenarioFileResult]) -> JSONValue {
        let runs = results.flatMap(\.runs)
        return .object([
            "passed": .bool(runs.allSatisfy(\.passed)),
            "pass_rate": rate(PassRate(runs)),
            "files": .array(results.map { file in
                .object([
                    "path": .string(file.path),
                    "scenarios": .array(EvalTable.orderedNames(file.runs).map { name in
                        let scenarioRuns = file.runs.filter { $0.scenario == name }
                        return .object(["name": .string(name), "pass_rate": rate(PassRate(scenarioRuns)), "runs": .array(scenarioRuns.map(run))])
                    }),
                ])
            }),
        ])
    }

    private static func rate(_ rate: PassRate) -> JSONValue {
        .object(["passed": .number(Double(rate.passed)), "total": .number(Double(rate.total)), "text": .string(rate.description)])
    }

    private static func run(_ run: ScenarioRun) -> JSONValue {
        var members: [String: JSONValue] = [
            "repeat": .number(Double(run.repeatNumber)),
            "passed": .bool(run.passed),
            "duration_ms": .number(Double(run.durationMs)),
            "turns": .array(run.turns.map(turn)),
        ]
        if let reason = run.failureReason { members["failure"] = .string(reason) }
        if let judge = run.judge {
            members["judge"] = .object([
                "score": judge.score.map(JSONValue.number) ?? .null, "pass_score": .number(judge.passScore),
                "passed": .bool(judge.passed), "reason": .string(judge.reason),
            ])
        }
        return .object(members)
    }

    private static func turn(_ turn: TurnResult) -> JSONValue {
        var members: [String: JSONValue] = [
            "turn": .number(Double(turn.number)), "kind": .string(turn.kind), "line": .number(Double(turn.line)),
            "passed": .bool(turn.passed),
            "expectations": .array(turn.outcomes.map { outcome in
                .object(["expectation": .string(outcome.expectation), "passed": .bool(outcome.passed), "reason": .string(outcome.reason)])
            }),
        ]
        if let said = turn.said { members["caller_said"] = .string(said) }
        if let reason = turn.failureReason { members["failure"] = .string(reason) }
        guard let observed = turn.observation else { return .object(members) }
        members["heard"] = observed.heard.map(JSONValue.string) ?? .null
        members["reply"] = .string(observed.reply)
        members["tool_calls"] = .array(observed.toolCalls.map { .object(["name": .string($0.name), "arguments": .string($0.arguments)]) })
        members["handoffs"] = .array(observed.handoffs.map(JSONValue.string))
        members["response_status"] = observed.responseStatus.map(JSONValue.string) ?? .null
        members["interrupted"] = .bool(observed.wasInterrupted)
        if let verdict = observed.interruptionVerdict {
            var judged: [String: JSONValue] = ["interrupts": .bool(verdict.interrupts), "reason": .string(verdict.reason)]
            if let words = verdict.words { judged["words"] = .string(words) }
            members["interruption"] = .object(judged)
        }
        members["timings"] = .object([
            "reply_started_after_ms": observed.replyStartedAfterMs.map { .number(Double($0)) } ?? .null,
            "reply_audio_ms": .number(Double(observed.replyAudioMs)),
            "interrupted_at_audio_ms": observed.interruptedAtAudioMs.map { .number(Double($0)) } ?? .null,
            "duration_ms": .number(Double(observed.durationMs)),
        ])
        return .object(members)
    }
}
