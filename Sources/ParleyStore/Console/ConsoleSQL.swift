import Foundation

/// The operator console's queries, written once for both engines: they differ only in how a
/// parameter is written (`?` or `$n`) and in the type a number is cast to.
struct ConsoleSQL {
    enum Dialect {
        case sqlite, postgres
    }

    let dialect: Dialect

    /// The columns a call is read from, in `callRecord`'s order (`c` is the conversation).
    static let callColumns =
        "calls.id, calls.conversation_id, c.agent_id, calls.user_id, calls.door, calls.node_id, calls.started_at, "
        + "calls.ended_at, calls.error_count, calls.turn_count"
    static let callsJoined = "calls LEFT JOIN conversations c ON c.id = calls.conversation_id"

    /// The columns turn figures are read from, in `turnFigures`'s order.
    static let figureColumns =
        "response_id, conversation_id, session_id, user_item_id, turn_ended_at, speech_end_audio_ms, silence_window_ms, detector_wait_ms, "
        + "transcription_ms, first_token_ms, first_audio_ms, status, unheard_text, verdicts"

    /// Inserts a call, or updates its end and counts.
    var saveCall: String {
        "INSERT INTO calls(id, conversation_id, user_id, door, node_id, started_at, ended_at, error_count, turn_count) "
            + "VALUES(\(parameters(1...3)), \(parameters(4...5)), \(number(6)), \(number(7)), \(number(8)), \(number(9))) "
            + "ON CONFLICT(id) DO UPDATE SET ended_at = excluded.ended_at, error_count = excluded.error_count, "
            + "turn_count = excluded.turn_count"
    }

    /// The parameters of `saveCall`, as text.
    static func saveCallParameters(_ call: CallRecord) -> [String?] {
        [call.id, call.conversationID, call.userID, call.door, call.nodeID, String(call.startedAt.timeIntervalSince1970),
         call.endedAt.map { String($0.timeIntervalSince1970) }, String(call.errorCount), String(call.turnCount)]
    }

    /// Inserts turn figures, or replaces them.
    var saveTurnFigures: String {
        "INSERT INTO turn_figures(\(Self.figureColumns)) VALUES(\(parameters(1...4)), \(number(5)), \(integer(6)), \(number(7)), "
            + "\(number(8)), \(number(9)), \(number(10)), \(number(11)), \(parameters(12...14))) "
            + "ON CONFLICT(conversation_id, response_id) DO UPDATE SET silence_window_ms = excluded.silence_window_ms, "
            + "speech_end_audio_ms = excluded.speech_end_audio_ms, detector_wait_ms = excluded.detector_wait_ms, transcription_ms = excluded.transcription_ms, "
            + "first_token_ms = excluded.first_token_ms, first_audio_ms = excluded.first_audio_ms, status = excluded.status, "
            + "unheard_text = excluded.unheard_text, verdicts = excluded.verdicts"
    }

    /// The parameters of `saveTurnFigures`, as text.
    static func saveTurnFiguresParameters(_ figures: TurnFiguresRecord) -> [String?] {
        func text(_ value: Double?) -> String? { value.map { String($0) } }
        return [figures.responseID, figures.conversationID, figures.sessionID, figures.userItemID,
                String(figures.turnEndedAt.timeIntervalSince1970), figures.speechEndAudioMs.map { String($0) }, text(figures.silenceWindowMs), text(figures.detectorWaitMs),
                text(figures.transcriptionMs), text(figures.firstTokenMs), text(figures.firstAudioMs), figures.status,
                figures.unheardText, figures.verdicts.isEmpty ? nil : (try? JSONEncoder().encode(figures.verdicts)).map { String(decoding: $0, as: UTF8.self) }]
    }

    /// The page of calls `query` asks for, one more than its limit (to tell whether a next page exists).
    func listCalls(_ query: CallQuery, now: Date) -> (sql: String, parameters: [String?]) {
        var conditions: [String] = []
        var values: [String?] = []
        func bind(_ value: String) -> String {
            values.append(value)
            return parameter(values.count)
        }
        func bindNumber(_ value: Double) -> String {
            values.append(String(value))
            return number(values.count)
        }
        if let search = query.search?.trimmingCharacters(in: .whitespaces), !search.isEmpty {
            let pattern = bind("%" + Self.escapedForLike(search.lowercased()) + "%")
            let columns = ["calls.id", "calls.conversation_id", "c.agent_id", "calls.user_id"]
            conditions.append("(" + columns.map { "lower(coalesce(\($0), '')) LIKE \(pattern) ESCAPE '\\'" }.joined(separator: " OR ") + ")")
        }
        for word in query.transcriptWords.flatMap(ItemRecord.words(of:)) {
            // Letters and digits only, so nothing in the pattern is special to LIKE.
            let pattern = bind("% " + word + "%")
            conditions.append("EXISTS (SELECT 1 FROM items i WHERE i.conversation_id = calls.conversation_id AND i.words LIKE \(pattern))")
        }
        if let agentID = query.agentID { conditions.append("c.agent_id = \(bind(agentID))") }
        if let userID = query.userID { conditions.append("calls.user_id = \(bind(userID))") }
        if let door = query.door { conditions.append("calls.door = \(bind(door))") }
        if let from = query.startedFrom { conditions.append("calls.started_at >= \(bindNumber(from.timeIntervalSince1970))") }
        if let before = query.startedBefore { conditions.append("calls.started_at < \(bindNumber(before.timeIntervalSince1970))") }
        if let minimum = query.minimumSeconds {
            let end = "coalesce(calls.ended_at, \(bindNumber(now.timeIntervalSince1970)))"
            conditions.append("\(end) - calls.started_at >= \(bindNumber(minimum))")
        }
        if let hasErrors = query.hasErrors { conditions.append(hasErrors ? "calls.error_count > 0" : "calls.error_count = 0") }
        if let isLive = query.isLive { conditions.append(isLive ? "calls.ended_at IS NULL" : "calls.ended_at IS NOT NULL") }
        if let after = query.after {
            let time = bindNumber(after.startedAt)
            conditions.append("(calls.started_at < \(time) OR (calls.started_at = \(time) AND calls.id < \(bind(after.id))))")
        }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let sql = "SELECT \(Self.callColumns) FROM \(Self.callsJoined)\(filter) "
            + "ORDER BY calls.started_at DESC, calls.id DESC LIMIT \(max(1, query.limit) + 1)"
        return (sql, values)
    }

    /// A page from the rows `listCalls` read.
    static func page(_ calls: [CallRecord], limit: Int) -> CallPage {
        let limit = max(1, limit)
        guard calls.count > limit else { return CallPage(calls: calls, nextCursor: nil) }
        let shown = Array(calls.prefix(limit))
        let last = shown[shown.count - 1]
        return CallPage(calls: shown, nextCursor: CallCursor(startedAt: last.startedAt.timeIntervalSince1970, id: last.id))
    }

    /// A call from a row of `callColumns`, every value as text.
    static func callRecord(_ row: [String?]) -> CallRecord {
        CallRecord(
            id: row[0] ?? "", conversationID: row[1] ?? "", agentID: row[2], userID: row[3], door: row[4] ?? "",
            nodeID: row[5] ?? "", startedAt: date(row[6]) ?? Date(timeIntervalSince1970: 0), endedAt: date(row[7]),
            errorCount: row[8].flatMap { Int($0) } ?? 0, turnCount: row[9].flatMap { Int($0) } ?? 0
        )
    }

    /// Turn figures from a row of `figureColumns`, every value as text.
    static func turnFigures(_ row: [String?]) -> TurnFiguresRecord {
        TurnFiguresRecord(
            responseID: row[0] ?? "", conversationID: row[1] ?? "", sessionID: row[2] ?? "", userItemID: row[3],
            turnEndedAt: date(row[4]) ?? Date(timeIntervalSince1970: 0), speechEndAudioMs: row[5].flatMap { Int($0) },
            silenceWindowMs: row[6].flatMap { Double($0) }, detectorWaitMs: row[7].flatMap { Double($0) },
            transcriptionMs: row[8].flatMap { Double($0) }, firstTokenMs: row[9].flatMap { Double($0) },
            firstAudioMs: row[10].flatMap { Double($0) }, status: row[11] ?? "", unheardText: row[12],
            verdicts: row[13].flatMap { try? JSONDecoder().decode([InterruptionVerdict].self, from: Data($0.utf8)) } ?? []
        )
    }

    private static func date(_ text: String?) -> Date? {
        text.flatMap { Double($0) }.map { Date(timeIntervalSince1970: $0) }
    }

    /// `text` with LIKE's wildcards taken literally.
    private static func escapedForLike(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
    }

    /// Parameter `index` (counted from 1).
    func parameter(_ index: Int) -> String {
        switch dialect {
        case .sqlite: "?\(index)"
        case .postgres: "$\(index)"
        }
    }

    /// Parameters `range`, comma-separated.
    private func parameters(_ range: ClosedRange<Int>) -> String {
        range.map(parameter).joined(separator: ", ")
    }

    /// Parameter `index` read as a whole number (every parameter is bound as text).
    func integer(_ index: Int) -> String {
        switch dialect {
        case .sqlite: "CAST(?\(index) AS INTEGER)"
        case .postgres: "$\(index)::bigint"
        }
    }

    /// Parameter `index` read as a number (every parameter is bound as text).
    func number(_ index: Int) -> String {
        switch dialect {
        case .sqlite: "CAST(?\(index) AS REAL)"
        case .postgres: "$\(index)::double precision"
        }
    }
}
