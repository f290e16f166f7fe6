import Foundation
import ParleyCore
#if canImport(Glibc)
import Glibc
#endif

/// One JSON line per significant event, to standard error. Never given audio or secrets:
/// callers pass ids, counts, codes and durations only.
public struct EventLog: Sendable {
    private let write: @Sendable (String) -> Void

    /// A log writing to `write` (standard error by default).
    public init(write: @escaping @Sendable (String) -> Void = { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }) {
        self.write = write
    }

    /// A log that drops everything.
    public static let silent = EventLog { _ in }

    /// Logs `event` with `fields`.
    public func log(_ event: String, session: String? = nil, _ fields: [String: JSONScalarField] = [:]) {
        var object: [String: JSONValue] = ["ts": .string(Self.timestamp(Date())), "event": .string(event)]
        if let session { object["session"] = .string(session) }
        for (key, value) in fields { object[key] = value.jsonValue }
        write(JSONValue.object(object).jsonText)
    }

    /// `date` in ISO 8601, UTC, to the millisecond (`2026-11-29T22:13:40.333Z`). Built by hand:
    /// a new `ISO8601DateFormatter` per line took a tenth of the server's CPU under load.
    static func timestamp(_ date: Date) -> String {
        let totalMilliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var time = time_t(totalMilliseconds / 1000)
        var parts = tm()
        gmtime_r(&time, &parts)
        let milliseconds = totalMilliseconds % 1000
        func padded(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(padded(parts.tm_year + 1900, 4))-\(padded(parts.tm_mon + 1, 2))-\(padded(parts.tm_mday, 2))"
            + "T\(padded(parts.tm_hour, 2)):\(padded(parts.tm_min, 2)):\(padded(parts.tm_sec, 2)).\(padded(Int32(milliseconds), 3))Z"
    }
}

/// A value a log line may carry: text, a number or a flag.
public enum JSONScalarField: Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral {
    case string(String)
    case number(Double)
    case bool(Bool)

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }

    var jsonValue: JSONValue {
        switch self {
        case .string(let value): .string(value)
        case .number(let value): .number(value)
        case .bool(let value): .bool(value)
        }
    }
}
