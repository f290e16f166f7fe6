import Foundation

/// Builds compact JSON text by appending to one string, members in the order written. The
/// realtime events are encoded with it instead of `JSONEncoder`: it is several times faster
/// and keeps `type` first, as OpenAI's server does.
struct RealtimeJSONWriter {
    /// The text written so far.
    private(set) var text: String
    /// Whether the current object or array has no member yet.
    private var isFirst = true

    /// A writer with room for about `capacity` bytes.
    init(capacity: Int = 256) {
        text = ""
        text.reserveCapacity(capacity)
    }

    /// Writes one object through `body` and returns its text.
    static func object(capacity: Int = 256, _ body: (inout RealtimeJSONWriter) -> Void) -> String {
        var writer = RealtimeJSONWriter(capacity: capacity)
        writer.text.append("{")
        body(&writer)
        writer.text.append("}")
        return writer.text
    }

    // MARK: Object members

    /// Writes the key of the next member.
    mutating func key(_ key: String) {
        separate()
        Self.appendQuoted(key, to: &text)
        text.append(":")
    }

    /// Writes a string member.
    mutating func field(_ key: String, _ value: String) {
        self.key(key)
        Self.appendQuoted(value, to: &text)
    }

    /// Writes a string member, or `null` when `value` is nil.
    mutating func field(_ key: String, orNull value: String?) {
        self.key(key)
        if let value { Self.appendQuoted(value, to: &text) } else { text.append("null") }
    }

    /// Writes a string member only when `value` is not nil.
    mutating func field(_ key: String, ifPresent value: String?) {
        if let value { field(key, value) }
    }

    /// Writes an integer member.
    mutating func field(_ key: String, _ value: Int) {
        self.key(key)
        text.append(String(value))
    }

    /// Writes an integer member only when `value` is not nil.
    mutating func field(_ key: String, ifPresent value: Int?) {
        if let value { field(key, value) }
    }

    /// Writes a number member (`null` when not finite).
    mutating func field(_ key: String, _ value: Double) {
        self.key(key)
        Self.appendNumber(value, to: &text)
    }

    /// Writes a number member only when `value` is not nil.
    mutating func field(_ key: String, ifPresent value: Double?) {
        if let value { field(key, value) }
    }

    /// Writes a boolean member.
    mutating func field(_ key: String, _ value: Bool) {
        self.key(key)
        text.append(value ? "true" : "false")
    }

    /// Writes a member holding any JSON value.
    mutating func field(_ key: String, _ value: JSONValue) {
        self.key(key)
        Self.appendValue(value, to: &text)
    }

    /// Writes a `null` member.
    mutating func nullField(_ key: String) {
        self.key(key)
        text.append("null")
    }

    /// Writes a member holding an array of strings.
    mutating func field(_ key: String, _ values: [String]) {
        self.key(key)
        text.append("[")
        for (offset, value) in values.enumerated() {
            if offset > 0 { text.append(",") }
            Self.appendQuoted(value, to: &text)
        }
        text.append("]")
    }

    /// Writes a member holding an object written by `body`.
    mutating func object(_ key: String, _ body: (inout RealtimeJSONWriter) -> Void) {
        self.key(key)
        writeNested(open: "{", close: "}", body)
    }

    /// Writes a member holding an array written by `body`; use `elementObject` inside.
    mutating func array(_ key: String, _ body: (inout RealtimeJSONWriter) -> Void) {
        self.key(key)
        writeNested(open: "[", close: "]", body)
    }

    // MARK: Array elements

    /// Writes an object element of the current array.
    mutating func elementObject(_ body: (inout RealtimeJSONWriter) -> Void) {
        separate()
        writeNested(open: "{", close: "}", body)
    }

    // MARK: Plumbing

    private mutating func separate() {
        if isFirst { isFirst = false } else { text.append(",") }
    }

    private mutating func writeNested(open: String, close: String, _ body: (inout RealtimeJSONWriter) -> Void) {
        var nested = RealtimeJSONWriter(capacity: 0)
        swap(&nested.text, &text)
        nested.text.append(open)
        body(&nested)
        nested.text.append(close)
        swap(&nested.text, &text)
    }

    /// Appends `value` as JSON text.
    static func appendValue(_ value: JSONValue, to text: inout String) {
        switch value {
        case .null: text.append("null")
        case .bool(let flag): text.append(flag ? "true" : "false")
        case .number(let number): appendNumber(number, to: &text)
        case .string(let string): appendQuoted(string, to: &text)
        case .array(let elements):
            text.append("[")
            for (offset, element) in elements.enumerated() {
                if offset > 0 { text.append(",") }
                appendValue(element, to: &text)
            }
            text.append("]")
        case .object(let members):
            text.append("{")
            for (offset, key) in members.keys.sorted().enumerated() {
                if offset > 0 { text.append(",") }
                appendQuoted(key, to: &text)
                text.append(":")
                appendValue(members[key] ?? .null, to: &text)
            }
            text.append("}")
        }
    }

    /// Appends a number: integers without a fraction, others in Swift's shortest round-trip
    /// form (valid JSON), non-finite values as `null`.
    static func appendNumber(_ value: Double, to text: inout String) {
        guard value.isFinite else {
            text.append("null")
            return
        }
        if value.rounded() == value, abs(value) < 1e15 {
            text.append(String(Int64(value)))
        } else {
            text.append(value.description)
        }
    }

    /// Appends `value` as a quoted JSON string, escaping quotes, backslashes and control
    /// characters; a string with nothing to escape (base64 audio) is copied whole.
    static func appendQuoted(_ value: String, to text: inout String) {
        text.append("\"")
        let needsEscaping = value.utf8.withContiguousStorageIfAvailable(Self.containsEscapable)
            ?? Array(value.utf8).withUnsafeBufferPointer(Self.containsEscapable)
        if !needsEscaping {
            text.append(value)
        } else {
            for scalar in value.unicodeScalars {
                switch scalar {
                case "\"": text.append("\\\"")
                case "\\": text.append("\\\\")
                case "\n": text.append("\\n")
                case "\r": text.append("\\r")
                case "\t": text.append("\\t")
                case "\u{08}": text.append("\\b")
                case "\u{0C}": text.append("\\f")
                case _ where scalar.value < 0x20:
                    let hex = String(scalar.value, radix: 16)
                    text.append("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
                default: text.unicodeScalars.append(scalar)
                }
            }
        }
        text.append("\"")
    }

    /// Whether `bytes` hold a quote, a backslash or a control character. Eight bytes at a time
    /// (SWAR): a 2.5 KB base64 audio chunk is scanned in a few hundred nanoseconds.
    static func containsEscapable(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ word: UInt64) -> Bool { (word &- ones) & ~word & highs != 0 }
        var offset = 0
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while offset + 8 <= bytes.count {
                let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                let belowSpace = (word &- ones &* 0x20) & ~word & highs != 0
                if belowSpace || hasZeroByte(word ^ (ones &* 0x22)) || hasZeroByte(word ^ (ones &* 0x5C)) { return true }
                offset += 8
            }
        }
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return true }
            offset += 1
        }
        return false
    }
}
