import Foundation

/// The operator console's calls and turn figures in SQLite (queries in `ConsoleSQL`).
extension SQLiteStore {
    private static let sql = ConsoleSQL(dialect: .sqlite)

    public func saveCall(_ call: CallRecord) async throws {
        try database.query(Self.sql.saveCall, Self.values(ConsoleSQL.saveCallParameters(call)))
    }

    public func calls(_ query: CallQuery) async throws -> CallPage {
        let (text, parameters) = Self.sql.listCalls(query, now: Date())
        let calls = try database.query(text, Self.values(parameters)).map { ConsoleSQL.callRecord(Self.texts($0)) }
        return ConsoleSQL.page(calls, limit: query.limit)
    }

    public func calls(conversationID: String) async throws -> [CallRecord] {
        try database.query(
            "SELECT \(ConsoleSQL.callColumns) FROM \(ConsoleSQL.callsJoined) WHERE calls.conversation_id = ? "
                + "ORDER BY calls.started_at, calls.id",
            [.text(conversationID)]
        ).map { ConsoleSQL.callRecord(Self.texts($0)) }
    }

    public func callStartTimes(from: Date, before: Date) async throws -> [Date] {
        try database.query(
            "SELECT started_at FROM calls WHERE started_at >= ? AND started_at < ? ORDER BY started_at",
            [.real(from.timeIntervalSince1970), .real(before.timeIntervalSince1970)]
        ).map { Date(timeIntervalSince1970: $0[0].real ?? 0) }
    }

    public func saveTurnFigures(_ figures: TurnFiguresRecord) async throws {
        try database.query(Self.sql.saveTurnFigures, Self.values(ConsoleSQL.saveTurnFiguresParameters(figures)))
    }

    public func turnFigures(conversationID: String) async throws -> [TurnFiguresRecord] {
        try database.query(
            "SELECT \(ConsoleSQL.figureColumns) FROM turn_figures WHERE conversation_id = ? ORDER BY turn_ended_at, response_id",
            [.text(conversationID)]
        ).map { ConsoleSQL.turnFigures(Self.texts($0)) }
    }

    public func turnFigures(from: Date, before: Date) async throws -> [TurnFiguresRecord] {
        try database.query(
            "SELECT \(ConsoleSQL.figureColumns) FROM turn_figures WHERE turn_ended_at >= ? AND turn_ended_at < ? "
                + "ORDER BY turn_ended_at, response_id",
            [.real(from.timeIntervalSince1970), .real(before.timeIntervalSince1970)]
        ).map { ConsoleSQL.turnFigures(Self.texts($0)) }
    }

    /// Parameters written as text, as `ConsoleSQL` binds them.
    private static func values(_ texts: [String?]) -> [SQLiteValue] {
        texts.map { $0.map(SQLiteValue.text) ?? .null }
    }

    /// A row's values as text, as `ConsoleSQL` reads them.
    private static func texts(_ row: [SQLiteValue]) -> [String?] {
        row.map { value in
            switch value {
            case .null: nil
            case .integer(let number): String(number)
            case .real(let number): String(number)
            case .text(let text): text
            }
        }
    }
}
