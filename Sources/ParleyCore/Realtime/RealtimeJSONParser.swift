import Foundation

/// A strict JSON parser for untrusted realtime messages: bounded nesting, no recursion beyond
/// `maximumDepth`, and a failure (never a crash) for anything that is not JSON.
struct RealtimeJSONParser {
    /// Why the text is not acceptable JSON.
    enum Failure: Error, Equatable {
        /// The text breaks the JSON grammar at this UTF-8 offset.
        case syntax(offset: Int)
        /// Arrays and objects nest deeper than the parser allows.
        case tooDeep(limit: Int)
    }

    /// The deepest nesting of arrays and objects accepted; tool schemas stay far below it.
    static let defaultMaximumDepth = 64

    private let bytes: UnsafeBufferPointer<UInt8>
    private let maximumDepth: Int
    private var index = 0

    private init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    /// Parses one JSON value filling all of `text` (surrounding whitespace allowed).
    static func parse(_ text: String, maximumDepth: Int = defaultMaximumDepth) -> Result<JSONValue, Failure> {
        var text = text
        return text.withUTF8 { buffer in
            var parser = RealtimeJSONParser(bytes: buffer, maximumDepth: maximumDepth)
            return parser.parseDocument()
        }
    }

    private mutating func parseDocument() -> Result<JSONValue, Failure> {
        do throws(Failure) {
            skipWhitespace()
            let value = try parseValue(depth: 0)
            skipWhitespace()
            guard index == bytes.count else { throw .syntax(offset: index) }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }

    private mutating func parseValue(depth: Int) throws(Failure) -> JSONValue {
        guard index < bytes.count else { throw .syntax(offset: index) }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw .syntax(offset: index)
        }
    }

    private mutating func parseObject(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= maximumDepth else { throw .tooDeep(limit: maximumDepth) }
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if try accept(UInt8(ascii: "}")) { return .object(members) }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw .syntax(offset: index) }
            let key = try parseString()
            skipWhitespace()
            guard try accept(UInt8(ascii: ":")) else { throw .syntax(offset: index) }
            skipWhitespace()
            members[key] = try parseValue(depth: depth)
            skipWhitespace()
            if try accept(UInt8(ascii: ",")) { continue }
            if try accept(UInt8(ascii: "}")) { return .object(members) }
            throw .syntax(offset: index)
        }
    }

    private mutating func parseArray(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= maximumDepth else { throw .tooDeep(limit: maximumDepth) }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if try accept(UInt8(ascii: "]")) { return .array(elements) }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            if try accept(UInt8(ascii: ",")) { continue }
            if try accept(UInt8(ascii: "]")) { return .array(elements) }
            throw .syntax(offset: index)
        }
    }

    /// Parses a string starting at its opening quote; escapes are decoded, lone surrogates
    /// become U+FFFD.
    private mutating func parseString() throws(Failure) -> String {
        index += 1
        let start = index
        // Fast path: no escapes, which is every base64 audio payload.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw .syntax(offset: index) }
            index += 1
        }
        var decoded = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: decoded, as: UTF8.self)
            case UInt8(ascii: "\\"):
                index += 1
                try parseEscape(into: &decoded)
            case ..<0x20:
                throw .syntax(offset: index)
            default:
                decoded.append(byte)
                index += 1
            }
        }
        throw .syntax(offset: index)
    }

    private mutating func parseEscape(into decoded: inout [UInt8]) throws(Failure) {
        guard index < bytes.count else { throw .syntax(offset: index) }
        let escape = bytes[index]
        index += 1
        switch escape {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
        case UInt8(ascii: "b"): decoded.append(0x08)
        case UInt8(ascii: "f"): decoded.append(0x0C)
        case UInt8(ascii: "n"): decoded.append(0x0A)
        case UInt8(ascii: "r"): decoded.append(0x0D)
        case UInt8(ascii: "t"): decoded.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = UInt32(try parseHexQuad())
            if (0xD800...0xDBFF).contains(scalar), index + 1 < bytes.count,
               bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") {
                let save = index
                index += 2
                let low = UInt32(try parseHexQuad())
                if (0xDC00...0xDFFF).contains(low) {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else {
                    index = save
                }
            }
            let character = Unicode.Scalar(scalar) ?? "\u{FFFD}"
            decoded.append(contentsOf: Array(String(character).utf8))
        default:
            throw .syntax(offset: index - 1)
        }
    }

    private mutating func parseHexQuad() throws(Failure) -> UInt16 {
        guard index + 4 <= bytes.count else { throw .syntax(offset: index) }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw .syntax(offset: index)
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    /// Parses a number by the JSON grammar; magnitudes beyond `Double` become ±infinity, which
    /// every integer field then refuses.
    private mutating func parseNumber() throws(Failure) -> Double {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw .syntax(offset: index) }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            skipDigits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw .syntax(offset: index) }
            skipDigits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else { throw .syntax(offset: index) }
            skipDigits()
        }
        let literal = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(literal) else { throw .syntax(offset: start) }
        return value
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private mutating func skipDigits() {
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): index += 1
            default: return
            }
        }
    }

    private mutating func accept(_ byte: UInt8) throws(Failure) -> Bool {
        guard index < bytes.count else { throw .syntax(offset: index) }
        guard bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(Failure) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw .syntax(offset: index) }
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: count)
        for offset in 0..<count where bytes[index + offset] != expected[offset] {
            throw .syntax(offset: index + offset)
        }
        index += count
    }
}
