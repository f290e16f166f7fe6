import Foundation
import ParleyCore

/// One finished span, as OTLP carries it: hex ids, unix-nanosecond times, typed attributes.
public struct TraceSpan: Sendable, Hashable {
    /// What a span's work was to its caller (OTLP `SpanKind`).
    public enum Kind: Int, Sendable {
        case `internal` = 1, server = 2, client = 3
    }

    /// An attribute value of one of OTLP's scalar types.
    public enum Value: Sendable, Hashable {
        case string(String)
        case int(Int)
        case double(Double)
        case bool(Bool)
    }

    /// 32 lowercase hex digits.
    public var traceID: String
    /// 16 lowercase hex digits.
    public var spanID: String
    public var parentSpanID: String?
    public var name: String
    public var kind: Kind
    public var start: Date
    public var end: Date
    public var attributes: [String: Value]
    /// The error message when the work failed (status `ERROR`); `nil` leaves the status unset.
    public var errorMessage: String?

    /// Creates a span.
    public init(
        traceID: String, spanID: String, parentSpanID: String? = nil, name: String, kind: Kind, start: Date, end: Date,
        attributes: [String: Value], errorMessage: String? = nil
    ) {
        self.traceID = traceID
        self.spanID = spanID
        self.parentSpanID = parentSpanID
        self.name = name
        self.kind = kind
        self.start = start
        self.end = end
        self.attributes = attributes
        self.errorMessage = errorMessage
    }

    /// A new trace id: 16 random bytes in hex.
    public static func makeTraceID() -> String { randomHex(UInt64.random(in: 1...UInt64.max)) + randomHex(UInt64.random(in: .min ... .max)) }
    /// A new span id: 8 random bytes in hex, never all zero.
    public static func makeSpanID() -> String { randomHex(UInt64.random(in: 1...UInt64.max)) }

    private static func randomHex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The span in OTLP/JSON (`opentelemetry.proto.trace.v1.Span`).
    var otlpJSON: JSONValue {
        var object: [String: JSONValue] = [
            "traceId": .string(traceID),
            "spanId": .string(spanID),
            "name": .string(name),
            "kind": .number(Double(kind.rawValue)),
            "startTimeUnixNano": .string(Self.unixNano(start)),
            "endTimeUnixNano": .string(Self.unixNano(max(start, end))),
            "attributes": Self.otlpAttributes(attributes),
        ]
        if let parentSpanID { object["parentSpanId"] = .string(parentSpanID) }
        if let errorMessage { object["status"] = .object(["code": .number(2), "message": .string(errorMessage)]) }
        return .object(object)
    }

    /// Attributes as OTLP `KeyValue`s, sorted by key (64-bit integers are JSON strings).
    static func otlpAttributes(_ attributes: [String: Value]) -> JSONValue {
        .array(attributes.sorted { $0.key < $1.key }.map { key, value in
            let typed: JSONValue = switch value {
            case .string(let text): .object(["stringValue": .string(text)])
            case .int(let number): .object(["intValue": .string(String(number))])
            case .double(let number): .object(["doubleValue": .number(number)])
            case .bool(let flag): .object(["boolValue": .bool(flag)])
            }
            return .object(["key": .string(key), "value": typed])
        })
    }

    /// Nanoseconds since 1970 as decimal text (exact to the microsecond `Date` keeps).
    static func unixNano(_ date: Date) -> String {
        let microseconds = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        return String(microseconds) + "000"
    }
}
