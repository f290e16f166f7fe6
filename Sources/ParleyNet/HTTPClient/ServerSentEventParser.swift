import Foundation

/// Turns the bytes of a `text/event-stream` body into events, however the bytes are split.
///
/// Follows the WHATWG parsing rules: lines end with CRLF, LF or CR; lines starting with `:`
/// are comments; `data` lines are joined with `\n`; `id` and `retry` are remembered; a blank
/// line dispatches the event. Unlike a browser, an event the stream ends without a blank line
/// after is still delivered by `finish()`, because some servers close right after the last line.
///
/// ```swift
/// var parser = ServerSentEventParser()
/// for event in try parser.push(Data("data: hi\n\n".utf8)) { print(event.data) }
/// ```
public struct ServerSentEventParser: Sendable {
    /// Input the parser refuses.
    public enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// A line or an event's data grew past `maxEventBytes`.
        case eventTooLarge(limit: Int)

        public var description: String {
            switch self {
            case .eventTooLarge(let limit): "server-sent event larger than \(limit) bytes"
            }
        }
    }

    /// The most bytes one line or one event's data may have before `push` throws.
    public let maxEventBytes: Int
    /// The reconnection time in milliseconds the stream asked for with `retry:`, if any.
    public private(set) var retryMilliseconds: Int?

    private var line: [UInt8] = []
    private var data: [UInt8] = []
    private var hasData = false
    private var eventType: String?
    private var lastEventID: String?
    private var lastByteWasCarriageReturn = false
    /// The first bytes of the stream while they may still be a UTF-8 byte order mark.
    private var streamStart: [UInt8]? = []

    /// Creates a parser.
    /// - Parameter maxEventBytes: the most bytes one line or one event's data may have.
    public init(maxEventBytes: Int = 4 << 20) {
        self.maxEventBytes = maxEventBytes
    }

    /// Parses the next bytes of the stream and returns the events they completed.
    /// - Throws: `Failure.eventTooLarge` when a line or event exceeds `maxEventBytes`.
    public mutating func push(_ bytes: some Sequence<UInt8>) throws(Failure) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if var start = streamStart {
                start.append(byte)
                if start == Self.byteOrderMark {
                    streamStart = nil
                } else if Self.byteOrderMark.starts(with: start) {
                    streamStart = start
                } else {
                    streamStart = nil
                    for startByte in start { try process(startByte, into: &events) }
                }
                continue
            }
            try process(byte, into: &events)
        }
        return events
    }

    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    private mutating func process(_ byte: UInt8, into events: inout [ServerSentEvent]) throws(Failure) {
        switch byte {
        case UInt8(ascii: "\n"):
            if lastByteWasCarriageReturn {
                lastByteWasCarriageReturn = false
            } else {
                try endLine(into: &events)
            }
        case UInt8(ascii: "\r"):
            lastByteWasCarriageReturn = true
            try endLine(into: &events)
        default:
            lastByteWasCarriageReturn = false
            guard line.count < maxEventBytes else { throw .eventTooLarge(limit: maxEventBytes) }
            line.append(byte)
        }
    }

    /// Ends the stream: processes an unterminated last line and returns the event still pending.
    public mutating func finish() -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        if let start = streamStart, start != Self.byteOrderMark {
            streamStart = nil
            line.append(contentsOf: start)
        }
        if !line.isEmpty { try? endLine(into: &events) }
        dispatch(into: &events)
        return events
    }

    private mutating func endLine(into events: inout [ServerSentEvent]) throws(Failure) {
        defer { line.removeAll(keepingCapacity: true) }
        guard let first = line.first else {
            dispatch(into: &events)
            return
        }
        if first == UInt8(ascii: ":") { return }
        let field: ArraySlice<UInt8>
        var value: ArraySlice<UInt8>
        if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
            field = line[..<colon]
            value = line[(colon + 1)...]
            if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        } else {
            field = line[...]
            value = []
        }
        switch String(decoding: field, as: UTF8.self) {
        case "data":
            guard data.count + value.count < maxEventBytes else { throw .eventTooLarge(limit: maxEventBytes) }
            if hasData { data.append(UInt8(ascii: "\n")) }
            data.append(contentsOf: value)
            hasData = true
        case "event":
            eventType = String(decoding: value, as: UTF8.self)
        case "id":
            if !value.contains(0) { lastEventID = String(decoding: value, as: UTF8.self) }
        case "retry":
            if !value.isEmpty, value.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
               let milliseconds = Int(String(decoding: value, as: UTF8.self)) {
                retryMilliseconds = milliseconds
            }
        default:
            break
        }
    }

    private mutating func dispatch(into events: inout [ServerSentEvent]) {
        defer {
            data.removeAll(keepingCapacity: true)
            hasData = false
            eventType = nil
        }
        guard hasData else { return }
        let type = eventType.flatMap { $0.isEmpty ? nil : $0 } ?? "message"
        events.append(ServerSentEvent(type: type, data: String(decoding: data, as: UTF8.self), lastEventID: lastEventID))
    }
}
