import Foundation

/// The operator console's calls and turn figures in PostgreSQL (queries in `ConsoleSQL`).
extension PostgresStore {
    private static let sql = ConsoleSQL(dialect: .postgres)

    public func saveCall(_ call: CallRecord) async throws {
        let parameters = ConsoleSQL.saveCallParameters(call)
        try await pool.run { connection in _ = try connection.query(Self.sql.saveCall, parameters) }
    }

    public func calls(_ query: CallQuery) async throws -> CallPage {
        let (text, parameters) = Self.sql.listCalls(query, now: Date())
        let calls = try await pool.run { connection in try connection.query(text, parameters).rows.map(ConsoleSQL.callRecord) }
        return ConsoleSQL.page(calls, limit: query.limit)
    }

    public func calls(conversationID: String) async throws -> [CallRecord] {
        try await pool.run { connection in
            try connection.query(
                "SELECT \(ConsoleSQL.callColumns) FROM \(ConsoleSQL.callsJoined) WHERE calls.conversation_id = $1 "
                    + "ORDER BY calls.started_at, calls.id",
                [conversationID]
            ).rows.map(ConsoleSQL.callRecord)
        }
    }

    public func callStartTimes(from: Date, before: Date) async throws -> [Date] {
        let parameters = [String(from.timeIntervalSince1970), String(before.timeIntervalSince1970)]
        return try await pool.run { connection in
            try connection.query(
                "SELECT started_at FROM calls WHERE started_at >= $1::double precision AND started_at < $2::double precision "
                    + "ORDER BY started_at",
                parameters
            ).rows.map { Date(timeIntervalSince1970: $0[0].flatMap { Double($0) } ?? 0) }
        }
    }

    public func saveTurnFigures(_ figures: TurnFiguresRecord) async throws {
        let parameters = ConsoleSQL.saveTurnFiguresParameters(figures)
        try await pool.run { connection in _ = try connection.query(Self.sql.saveTurnFigures, parameters) }
    }

    public func turnFigures(conversationID: String) async throws -> [TurnFiguresRecord] {
        try await pool.run { connection in
            try connection.query(
                "SELECT \(ConsoleSQL.figureColumns) FROM turn_figures WHERE conversation_id = $1 ORDER BY turn_ended_at, response_id",
                [conversationID]
            ).rows.map(ConsoleSQL.turnFigures)
        }
    }

    public func turnFigures(from: Date, before: Date) async throws -> [TurnFiguresRecord] {
        let parameters = [String(from.timeIntervalSince1970), String(before.timeIntervalSince1970)]
        return try await pool.run { connection in
            try connection.query(
                "SELECT \(ConsoleSQL.figureColumns) FROM turn_figures "
                    + "WHERE turn_ended_at >= $1::double precision AND turn_ended_at < $2::double precision "
                    + "ORDER BY turn_ended_at, response_id",
                parameters
            ).rows.map(ConsoleSQL.turnFigures)
        }
    }
}
