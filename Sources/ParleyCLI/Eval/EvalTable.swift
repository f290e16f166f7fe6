import Foundation

/// The readable report of an eval: per file, a table with one row per scenario run and turn
/// (pass or fail, and why), then each scenario's pass rate.
enum EvalTable {
    /// The report of `results`.
    static func render(_ results: [ScenarioFileResult], style: TerminalStyle) -> String {
        var text = ""
        for file in results {
            text += style.bold(file.path) + "\n"
            var rows: [[String]] = []
            for run in file.runs {
                let name = file.name(of: run)
                if let failure = run.failure {
                    rows.append([name, "", "FAIL", failure])
                }
                for turn in run.turns {
                    rows.append([name, "\(turn.number) \(turn.kind)", turn.passed ? "pass" : "FAIL", turn.failureReason ?? Self.summary(turn)])
                }
                if let judge = run.judge {
                    let score = judge.score.map { String(format: "%g/10", $0) } ?? "no score"
                    rows.append([name, "judge", judge.passed ? "pass" : "FAIL", "\(score) (pass at \(String(format: "%g", judge.passScore))): \(judge.reason)"])
                }
            }
            text += TextTable(header: ["Scenario", "Turn", "Result", "Why"], rows: rows).render(headerStyle: style.dim)
            for scenario in orderedNames(file.runs) {
                let rate = PassRate(file.runs.filter { $0.scenario == scenario })
                text += "  \(scenario): \(rate)\n"
            }
            text += "\n"
        }
        let all = PassRate(results.flatMap(\.runs))
        text += "\(all.passed == all.total ? "All scenario runs passed" : "Scenario runs"): \(all)\n"
        return text
    }

    /// What a passing turn showed: what was heard and the start of the reply.
    private static func summary(_ turn: TurnResult) -> String {
        guard let observed = turn.observation else { return "" }
        let reply = observed.reply.trimmingCharacters(in: .whitespacesAndNewlines)
        let shortReply = reply.count > 60 ? reply.prefix(57) + "..." : Substring(reply)
        let latency = observed.replyStartedAfterMs.map { ", \($0) ms" } ?? ""
        return "\"\(observed.heard ?? "")\" -> \"\(shortReply)\"\(latency)"
    }

    /// The scenario names of `runs`, first seen first.
    static func orderedNames(_ runs: [ScenarioRun]) -> [String] {
        var seen: Set<String> = []
        return runs.map(\.scenario).filter { seen.insert($0).inserted }
    }
}
