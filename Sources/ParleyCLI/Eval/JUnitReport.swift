import Foundation

/// An eval as JUnit XML for CI: a `testsuite` per scenario file, a `testcase` per scenario
/// run, and a `failure` naming the expectation that failed and why.
enum JUnitReport {
    /// The XML document for `results`.
    static func xml(_ results: [ScenarioFileResult]) -> String {
        let runs = results.flatMap(\.runs)
        var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        xml += #"<testsuites name="parley eval" tests="\#(runs.count)" failures="\#(runs.filter { !$0.passed }.count)" errors="0" time="\#(seconds(runs))">"# + "\n"
        for file in results {
            let failures = file.runs.filter { !$0.passed }.count
            xml += #"  <testsuite name="\#(escaped(file.path))" tests="\#(file.runs.count)" failures="\#(failures)" errors="0" skipped="0" time="\#(seconds(file.runs))">"# + "\n"
            for run in file.runs {
                let name = file.name(of: run)
                xml += #"    <testcase name="\#(escaped(name))" classname="\#(escaped(file.path))" time="\#(seconds([run]))">"# + "\n"
                if let reason = run.failureReason {
                    xml += #"      <failure message="\#(escaped(reason))" type="expectation">\#(escaped(details(run)))</failure>"# + "\n"
                }
                xml += "      <system-out>\(escaped(ConversationJudge.transcript(run.turns)))</system-out>\n"
                xml += "    </testcase>\n"
            }
            xml += "  </testsuite>\n"
        }
        return xml + "</testsuites>\n"
    }

    /// Every failure of `run`, one a line.
    private static func details(_ run: ScenarioRun) -> String {
        var lines: [String] = run.failure.map { [$0] } ?? []
        for turn in run.turns where !turn.passed {
            if turn.observation == nil || turn.observation?.failure != nil {
                lines.append("turn \(turn.number) (line \(turn.line)): \(turn.failureReason ?? "")")
            }
            for outcome in turn.outcomes where !outcome.passed {
                lines.append("turn \(turn.number) (line \(turn.line)): \(outcome.expectation): \(outcome.reason)")
            }
        }
        if let judge = run.judge, !judge.passed { lines.append("judge: \(judge.reason)") }
        return lines.joined(separator: "\n")
    }

    private static func seconds(_ runs: [ScenarioRun]) -> String {
        String(format: "%.3f", Double(runs.map(\.durationMs).reduce(0, +)) / 1000)
    }

    /// `text` safe inside XML attributes and elements; characters XML 1.0 forbids are dropped.
    static func escaped(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            case "\n": result += "&#10;"
            case "\t", "\r": result += "&#\(scalar.value);"
            default:
                if scalar.value >= 0x20, scalar.value != 0xFFFE, scalar.value != 0xFFFF { result.unicodeScalars.append(scalar) }
            }
        }
        return result
    }
}
