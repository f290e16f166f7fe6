import CLibPQ
import Foundation

/// An error from PostgreSQL or libpq, with their message on one line.
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// PostgreSQL's five-character SQLSTATE, when the server sent one.
    public var sqlState: String?
    /// The message, on one line.
    public var message: String
    /// Whether the connection was lost (the server restarted, the network failed): the
    /// statement may be retried on a new connection.
    public var isConnectionLost: Bool

    /// Creates an error.
    public init(sqlState: String? = nil, message: String, isConnectionLost: Bool = false) {
        self.sqlState = sqlState
        self.message = message
        self.isConnectionLost = isConnectionLost
    }

    public var description: String { "PostgreSQL: \(message)" }
}

/// One libpq connection. Not thread-safe: each belongs to one thread at a time (a pool
/// worker's, or the opener's before it hands the connection over).
final class PostgresConnection {
    /// The rows of a statement, as text (`nil` for SQL NULL), and how many rows it changed.
    struct Result {
        var rows: [[String?]]
        var affectedRows: Int
    }

    /// libpq's connection (used by `PostgresConnection+Notifications`).
    let handle: OpaquePointer
    let url: String

    /// Connects to `url` (`postgresql://user:password@host:port/database?…`), giving up
    /// after 10 s unless the URL sets `connect_timeout`.
    /// - Throws: `PostgresError` naming the server (without a password) and libpq's reason.
    init(url: String) throws {
        self.url = url
        let keywords = ["connect_timeout", "application_name", "dbname"]
        let values = ["10", "parley", url]  // The URL's own settings override the first two.
        let connection = withCStrings(keywords) { keywords in
            withCStrings(values) { values in PQconnectdbParams(keywords, values, 1) }
        }
        guard let connection else { throw PostgresError(message: "out of memory", isConnectionLost: true) }
        guard PQstatus(connection) == CONNECTION_OK else {
            let reason = Self.oneLine(String(cString: PQerrorMessage(connection)))
            PQfinish(connection)
            throw PostgresError(message: "cannot connect to \(Self.redacted(url)): \(reason)", isConnectionLost: true)
        }
        PQsetNoticeProcessor(connection, ignoreNotice, nil)
        handle = connection
    }

    deinit { PQfinish(handle) }

    /// Whether the connection is up, as far as libpq knows.
    var isConnected: Bool { PQstatus(handle) == CONNECTION_OK }

    /// Closes and reopens the connection with the same settings.
    /// - Throws: `PostgresError` (`isConnectionLost`) while the server cannot be reached.
    func reconnect() throws {
        PQreset(handle)
        guard isConnected else {
            throw PostgresError(message: "cannot reconnect to \(Self.redacted(url)): \(Self.oneLine(String(cString: PQerrorMessage(handle))))", isConnectionLost: true)
        }
        PQsetNoticeProcessor(handle, ignoreNotice, nil)
    }

    /// Runs one or more statements without parameters.
    func execute(_ sql: String) throws {
        try check(PQexec(handle, sql))
    }

    /// Runs one statement with `parameters` bound to `$1`, `$2`… as text.
    @discardableResult
    func query(_ sql: String, _ parameters: [String?] = []) throws -> Result {
        let copies = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { copies.forEach { free($0) } }
        let values = copies.map { UnsafePointer<CChar>($0) }
        return try check(PQexecParams(handle, sql, Int32(values.count), nil, values, nil, nil, 0))
    }

    /// Runs `body` in a transaction, committed when it returns and rolled back when it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            if isConnected { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// The rows of a successful result; clears the result either way.
    @discardableResult
    private func check(_ result: OpaquePointer?) throws -> Result {
        defer { PQclear(result) }
        let status = result.map(PQresultStatus) ?? PGRES_FATAL_ERROR
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let sqlState = result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "C"))) }.map { String(cString: $0) }
            let message = result.map { String(cString: PQresultErrorMessage($0)) } ?? String(cString: PQerrorMessage(handle))
            let isConnectionLost = !isConnected || sqlState.map(Self.meansConnectionLost) == true
            throw PostgresError(sqlState: sqlState, message: Self.oneLine(message), isConnectionLost: isConnectionLost)
        }
        guard let result else { return Result(rows: [], affectedRows: 0) }
        let rows = (0..<PQntuples(result)).map { row in
            (0..<PQnfields(result)).map { column in
                PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column))
            }
        }
        return Result(rows: rows, affectedRows: Int(String(cString: PQcmdTuples(result))) ?? 0)
    }

    /// SQLSTATEs after which the server has closed (or is closing) the session: connection
    /// exceptions (class 08) and the server shutting down or starting up (57P01–57P03).
    private static func meansConnectionLost(_ sqlState: String) -> Bool {
        sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(sqlState)
    }

    /// libpq's multi-line messages on one line.
    static func oneLine(_ message: String) -> String {
        message.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// `url` with its password (in the user part or the query) replaced by `***`.
    static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return "the database URL" }
        if components.password != nil { components.password = "***" }
        components.queryItems = components.queryItems?.map { item in
            item.name == "password" ? URLQueryItem(name: item.name, value: "***") : item
        }
        return components.string ?? "the database URL"
    }

    /// What is wrong with `url` as a PostgreSQL URL, or `nil` when libpq accepts it.
    static func problem(inURL url: String) -> String? {
        guard url.hasPrefix("postgresql://") || url.hasPrefix("postgres://") else {
            return "\"\(redacted(url))\" is not a postgresql:// URL"
        }
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(url, &error) else {
            defer { PQfreemem(error) }
            return "\"\(redacted(url))\" is not a valid PostgreSQL URL: \(oneLine(error.map { String(cString: $0) } ?? "unreadable"))"
        }
        PQconninfoFree(options)
        return nil
    }
}

/// Calls `body` with `strings` as a NULL-terminated array of C strings.
private func withCStrings<T>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> T) -> T {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    return body(copies.map { UnsafePointer($0) } + [nil])
}

/// libpq's notice processor: notices ("relation already exists, skipping") are not errors,
/// and libpq would otherwise print them on standard error.
private func ignoreNotice(context: UnsafeMutableRawPointer?, message: UnsafePointer<CChar>?) {}
