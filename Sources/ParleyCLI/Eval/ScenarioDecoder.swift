import Foundation
import ParleyCore

/// Reads scenario files (docs/evals.md): refuses text that is not JSON, fields of the wrong
/// type, unknown fields and impossible values, naming the line and the field.
enum ScenarioDecoder {
    /// The largest scenario file read.
    static let maximumFileBytes = 1 << 20
    /// The longest pause between spoken fragments and the latest interruption, in milliseconds.
    static let maximumDelayMs = 60_000
    /// The most keys one turn presses.
    static let maximumKeys = 32
    /// The longest wait between a turn's key presses, in milliseconds.
    static let maximumInterKeyMs = 5_000
    /// The wait between a turn's key presses when the file gives none, in milliseconds.
    static let defaultInterKeyMs = 200

    /// Reads the scenario file at `path` (relative to `directory`).
    /// - Throws: `ScenarioFileError`.
    static func read(_ path: String, relativeTo directory: URL) throws(ScenarioFileError) -> ScenarioFile {
        let url = path.hasPrefix("/") ? URL(fileURLWithPath: path) : directory.appendingPathComponent(path)
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ScenarioFileError(path: path, field: "", message: FileManager.default.fileExists(atPath: url.path) ? "cannot be read" : "no such file")
        }
        guard data.count <= maximumFileBytes else {
            throw ScenarioFileError(path: path, field: "", message: "larger than \(maximumFileBytes >> 10) KB")
        }
        guard let text = String(data: data, encoding: .utf8) else { throw ScenarioFileError(path: path, field: "", message: "not UTF-8 text") }
        let file = try decode(text, path: path)
        try checkRecordings(file, in: url.deletingLastPathComponent())
        return file
    }

    /// Refuses WAV turns whose file is missing (paths are relative to the scenario file).
    private static func checkRecordings(_ file: ScenarioFile, in directory: URL) throws(ScenarioFileError) {
        for (scenarioIndex, scenario) in file.scenarios.enumerated() {
            for (turnIndex, turn) in scenario.turns.enumerated() {
                guard case .wav(let wav) = turn.input else { continue }
                let resolved = wav.hasPrefix("/") ? wav : directory.appendingPathComponent(wav).path
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: resolved, isDirectory: &isDirectory), !isDirectory.boolValue else {
                    throw ScenarioFileError(
                        path: file.path, line: turn.line, field: "scenarios[\(scenarioIndex)].turns[\(turnIndex)].wav", message: "no such file \(wav)"
                    )
                }
            }
        }
    }

    /// Decodes the text of a scenario file read from `path`.
    /// - Throws: `ScenarioFileError`.
    static func decode(_ text: String, path: String) throws(ScenarioFileError) -> ScenarioFile {
        let map: JSONSourceMap
        do {
            map = try JSONSourceMap(scanning: text)
        } catch {
            throw ScenarioFileError(path: path, line: error.line, field: "", message: "not JSON: \(error.message)")
        }
        let json: JSONValue
        do {
            json = try JSONValue(parsing: text)
        } catch {
            throw ScenarioFileError(path: path, line: nil, field: "", message: "not JSON")
        }
        do {
            return ScenarioFile(path: path, scenarios: try scenarios(json, map))
        } catch {
            throw ScenarioFileError(path: path, line: map.line(of: error.field), field: error.field, message: error.message)
        }
    }

    private static func scenarios(_ json: JSONValue, _ map: JSONSourceMap) throws(ScenarioFieldError) -> [Scenario] {
        var file = try ScenarioFieldReader(json, at: "")
        _ = try file.string("$schema")
        let defaultAgent = try file.string("agent")
        guard let list = try file.array("scenarios") else { throw ScenarioFieldError(field: "scenarios", message: "missing (expected a list of scenarios)") }
        guard !list.isEmpty else { throw ScenarioFieldError(field: "scenarios", message: "expected at least one scenario") }
        try file.finish()
        var names: Set<String> = []
        var scenarios: [Scenario] = []
        for (value, path) in list {
            let scenario = try self.scenario(value, at: path, defaultAgent: defaultAgent, map)
            guard names.insert(scenario.name).inserted else {
                throw ScenarioFieldError(field: JSONSourceMap.member("name", of: path), message: "another scenario is named '\(scenario.name)'")
            }
            scenarios.append(scenario)
        }
        return scenarios
    }

    private static func scenario(_ value: JSONValue, at path: String, defaultAgent: String?, _ map: JSONSourceMap) throws(ScenarioFieldError) -> Scenario {
        var fields = try ScenarioFieldReader(value, at: path)
        let name = try fields.requiredString("name")
        let agent = try fields.string("agent") ?? defaultAgent
        var instructions: String?
        var voice: String?
        if let session = fields.value("session") {
            var settings = try ScenarioFieldReader(session, at: fields.field("session"))
            instructions = try settings.string("instructions")
            voice = try settings.string("voice")
            try settings.finish()
        }
        var turnDetection = CallerTurnDetection.pushToTalk
        if let name = try fields.string("turn_detection") {
            guard let chosen = CallerTurnDetection(rawValue: name) else {
                let choices = CallerTurnDetection.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
                throw ScenarioFieldError(field: fields.field("turn_detection"), message: "expected \(choices)")
            }
            turnDetection = chosen
        }
        guard let list = try fields.array("turns") else { throw ScenarioFieldError(field: fields.field("turns"), message: "missing (expected a list of turns)") }
        guard !list.isEmpty else { throw ScenarioFieldError(field: fields.field("turns"), message: "expected at least one turn") }
        var turns: [CallerTurn] = []
        for (value, turnPath) in list {
            let turn = try self.turn(value, at: turnPath, line: map.line(of: turnPath))
            if case .interrupt = turn.input, turns.isEmpty {
                throw ScenarioFieldError(field: JSONSourceMap.member("interrupt", of: turnPath), message: "the first turn has no reply to interrupt")
            }
            if case .backchannel = turn.input {
                let field = JSONSourceMap.member("backchannel", of: turnPath)
                if turns.isEmpty { throw ScenarioFieldError(field: field, message: "the first turn has no reply to speak over") }
                guard turnDetection == .serverVAD else {
                    throw ScenarioFieldError(field: field, message: "needs the scenario's \"turn_detection\": \"server_vad\" (under push-to-talk speech over a reply does nothing)")
                }
            }
            turns.append(turn)
        }
        for (index, turn) in turns.enumerated() where turn.expectations.contains(.interrupted(true)) {
            guard index + 1 < turns.count, case .interrupt = turns[index + 1].input else {
                throw ScenarioFieldError(field: list[index].path + ".expect.interrupted", message: "true needs the next turn to be an \"interrupt\"")
            }
        }
        let judge = try fields.value("judge").map { (value) throws(ScenarioFieldError) in try self.judge(value, at: fields.field("judge")) }
        try fields.finish()
        return Scenario(name: name, agentID: agent, instructions: instructions, agentVoice: voice, turnDetection: turnDetection, turns: turns, judge: judge)
    }

    private static let inputKeys = ["say", "wav", "text", "keys", "interrupt", "backchannel"]

    private static func turn(_ value: JSONValue, at path: String, line: Int) throws(ScenarioFieldError) -> CallerTurn {
        var fields = try ScenarioFieldReader(value, at: path)
        let given = inputKeys.filter { fields.has($0) }
        guard given.count == 1 else {
            let message = given.isEmpty
                ? "a turn needs one of \(inputKeys.map { "\"\($0)\"" }.joined(separator: ", "))"
                : "a turn takes one of \(given.map { "\"\($0)\"" }.joined(separator: " and ")), not both"
            throw ScenarioFieldError(field: path, message: message)
        }
        let input: CallerInput
        switch given[0] {
        case "say":
            let fragments: [String]
            if case .array = fields.value("say") {
                fragments = try (fields.array("say") ?? []).map { (value, fragmentPath) throws(ScenarioFieldError) in
                    guard let text = value.stringValue, !text.trimmingCharacters(in: .whitespaces).isEmpty else {
                        throw ScenarioFieldError(field: fragmentPath, message: "expected a string that is not empty")
                    }
                    return text
                }
                guard !fragments.isEmpty else { throw ScenarioFieldError(field: fields.field("say"), message: "expected at least one fragment") }
            } else {
                fragments = [try fields.requiredString("say")]
            }
            let pause = try fields.integer("pause_ms", in: 0...maximumDelayMs) ?? 0
            if fragments.count == 1, fields.has("pause_ms") {
                throw ScenarioFieldError(field: fields.field("pause_ms"), message: "a pause needs \"say\" to be a list of fragments")
            }
            input = .say(fragments: fragments, voice: try voice(&fields), pauseMs: pause)
        case "wav":
            input = .wav(path: try fields.requiredString("wav"))
        case "text":
            input = .text(try fields.requiredString("text"))
        case "keys":
            let keys = try fields.phoneKeys("keys", maximumCount: maximumKeys)
            input = .keys(keys, interKeyMs: try fields.integer("inter_key_ms", in: 0...maximumInterKeyMs) ?? defaultInterKeyMs)
        case "backchannel":
            let words = try fields.requiredString("backchannel")
            if fields.has("expect") {
                throw ScenarioFieldError(
                    field: fields.field("expect"), message: "a backchannel has no reply of its own: expect \"interrupted\": false on the turn it is spoken over"
                )
            }
            input = .backchannel(words: words, voice: try voice(&fields), afterReplyMs: try fields.integer("after_reply_ms", in: 0...maximumDelayMs) ?? 0)
        default:
            let words = try fields.requiredString("interrupt")
            input = .interrupt(words: words, voice: try voice(&fields), afterReplyMs: try fields.integer("after_reply_ms", in: 0...maximumDelayMs) ?? 0)
        }
        let expectations = try fields.value("expect").map { (value) throws(ScenarioFieldError) in try self.expectations(value, at: fields.field("expect")) } ?? []
        try fields.finish()
        return CallerTurn(input: input, expectations: expectations, line: line)
    }

    private static func voice(_ fields: inout ScenarioFieldReader) throws(ScenarioFieldError) -> CallerVoice? {
        guard let name = try fields.string("voice") else { return nil }
        guard let voice = CallerVoice(rawValue: name) else {
            throw ScenarioFieldError(field: fields.field("voice"), message: "expected one of \(CallerVoice.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return voice
    }

    private static func expectations(_ value: JSONValue, at path: String) throws(ScenarioFieldError) -> [TurnExpectation] {
        var fields = try ScenarioFieldReader(value, at: path)
        var expectations: [TurnExpectation] = []
        if let contains = fields.value("reply_contains") {
            switch contains {
            case .string: expectations.append(.replyContains(try fields.requiredString("reply_contains")))
            case .array:
                for (value, textPath) in try fields.array("reply_contains") ?? [] {
                    guard let text = value.stringValue, !text.isEmpty else { throw ScenarioFieldError(field: textPath, message: "expected a string that is not empty") }
                    expectations.append(.replyContains(text))
                }
            default: throw ScenarioFieldError(field: fields.field("reply_contains"), message: "expected a string or a list of strings")
            }
        }
        if let pattern = try fields.string("reply_matches") {
            do {
                _ = try NSRegularExpression(pattern: pattern)
            } catch {
                throw ScenarioFieldError(field: fields.field("reply_matches"), message: "not a regular expression")
            }
            expectations.append(.replyMatches(pattern))
        }
        if let tool = fields.value("tool_called") {
            var call = try ScenarioFieldReader(tool, at: fields.field("tool_called"))
            let name = try call.requiredString("name")
            var arguments: [String: JSONValue] = [:]
            if let contained = call.value("arguments_contain") {
                guard case .object(let members) = contained else {
                    throw ScenarioFieldError(field: call.field("arguments_contain"), message: "expected an object")
                }
                arguments = members
            }
            try call.finish()
            expectations.append(.toolCalled(name: name, argumentsContain: arguments))
        }
        if let none = try fields.bool("no_tool_called") {
            guard none else { throw ScenarioFieldError(field: fields.field("no_tool_called"), message: "expected true (leave it out otherwise)") }
            if expectations.contains(where: { if case .toolCalled = $0 { true } else { false } }) {
                throw ScenarioFieldError(field: fields.field("no_tool_called"), message: "contradicts tool_called")
            }
            expectations.append(.noToolCalled)
        }
        if let agent = try fields.string("handoff_to") { expectations.append(.handoffTo(agent)) }
        if let within = try fields.integer("reply_started_within_ms", in: 1...maximumDelayMs) { expectations.append(.replyStartedWithin(milliseconds: within)) }
        if let cut = try fields.bool("interrupted") { expectations.append(.interrupted(cut)) }
        try fields.finish()
        return expectations
    }

    private static func judge(_ value: JSONValue, at path: String) throws(ScenarioFieldError) -> JudgeRubric {
        var fields = try ScenarioFieldReader(value, at: path)
        let rubric = try fields.requiredString("rubric")
        let passScore = try fields.number("pass_score", in: 0...10) ?? 7
        try fields.finish()
        return JudgeRubric(rubric: rubric, passScore: passScore)
    }
}
