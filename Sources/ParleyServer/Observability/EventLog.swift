import Foundation

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
        var object: [String: Any] = ["ts": ISO8601DateFormatter().string(from: Date()), "event": event]
        if let session { object["session"] = session }
        for (key, value) in fields { object[key] = value.jsonObject }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
        write(String(decoding: data, as: UTF8.self))
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

    var jsonObject: Any {
        switch self {
        case .string(let value): value
        case .number(let value): value
        case .bool(let value): value
        }
    }
}
