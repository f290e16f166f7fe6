import Foundation

/// The line each member and element of a JSON text starts on, keyed by its path
/// (`turns[2].expect.tool_called.name`), so that an error about a value can name its line:
/// Foundation's parser reports no positions. Scanning also finds syntax errors, with their line.
struct JSONSourceMap: Sendable {
    /// A JSON text that is not well formed, at `line` (1-based).
    struct SyntaxError: Error, Sendable, Hashable {
        var line: Int
        var message: String
    }

    /// The deepest nesting scanned; deeper texts are refused rather than recursed into.
    static let maximumDepth = 64

    private var lines: [String: Int] = [:]

    /// Scans `text`.
    /// - Throws: `SyntaxError` at the first place the text stops being JSON.
    init(scanning text: String) throws(SyntaxError) {
        var scanner = Scanner(bytes: Array(text.utf8))
        scanner.skipWhitespace()
        try scanner.value(path: "", depth: 0)
        scanner.skipWhitespace()
        guard scanner.atEnd else { throw scanner.error("unexpected text after the JSON value") }
        lines = scanner.lines
    }

    /// The line of the value at `path`, else of its nearest enclosing value that was seen, else 1.
    func line(of path: String) -> Int {
        var path = path
        while !path.isEmpty {
            if let line = lines[path] { return line }
            path = Self.parent(of: path)
        }
        return lines[""] ?? 1
    }

    /// `a.b[2]` → `a.b`, `a.b` → `a`, `a` → ``.
    static func parent(of path: String) -> String {
        guard let cut = path.lastIndex(where: { $0 == "." || $0 == "[" }) else { return "" }
        return String(path[..<cut])
    }

    /// The path of member `key` inside `path`.
    static func member(_ key: String, of path: String) -> String {
        path.isEmpty ? key : "\(path).\(key)"
    }

    /// The path of element `index` inside `path`.
    static func element(_ index: Int, of path: String) -> String {
        "\(path)[\(index)]"
    }

    /// A recursive-descent pass over the bytes that records where values start.
    private struct Scanner {
        let bytes: [UInt8]
        var position = 0
        var line = 1
        var lines: [String: Int] = [:]

        init(bytes: [UInt8]) {
            self.bytes = bytes
        }

        var atEnd: Bool { position >= bytes.count }

        func error(_ message: String) -> SyntaxError {
            SyntaxError(line: line, message: message)
        }

        mutating func skipWhitespace() {
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: "\n"): line += 1
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"): break
                default: return
                }
                position += 1
            }
        }

        mutating func value(path: String, depth: Int) throws(SyntaxError) {
            guard depth < JSONSourceMap.maximumDepth else { throw error("nested deeper than \(JSONSourceMap.maximumDepth) levels") }
            guard position < bytes.count else { throw error("the text ends where a value should be") }
            if lines[path] == nil { lines[path] = line }
            switch bytes[position] {
            case UInt8(ascii: "{"): try object(path: path, depth: depth)
            case UInt8(ascii: "["): try array(path: path, depth: depth)
            case UInt8(ascii: "\""): _ = try string()
            default: try scalar()
            }
        }

        private mutating func object(path: String, depth: Int) throws(SyntaxError) {
            position += 1
            skipWhitespace()
            if consume("}") { return }
            while true {
                guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw error("expected a member name in quotes") }
                let keyLine = line
                let key = try string()
                let memberPath = JSONSourceMap.member(key, of: path)
                lines[memberPath] = keyLine
                skipWhitespace()
                guard consume(":") else { throw error("expected ':' after \"\(key)\"") }
                skipWhitespace()
                try value(path: memberPath, depth: depth + 1)
                skipWhitespace()
                if consume("}") { return }
                guard consume(",") else { throw error("expected ',' or '}' after the value of \"\(key)\"") }
                skipWhitespace()
            }
        }

        private mutating func array(path: String, depth: Int) throws(SyntaxError) {
            position += 1
            skipWhitespace()
            if consume("]") { return }
            var index = 0
            while true {
                try value(path: JSONSourceMap.element(index, of: path), depth: depth + 1)
                skipWhitespace()
                if consume("]") { return }
                guard consume(",") else { throw error("expected ',' or ']' in a list") }
                skipWhitespace()
                index += 1
            }
        }

        /// A string's text; escapes other than `\uXXXX` are decoded, which is enough for member names.
        private mutating func string() throws(SyntaxError) -> String {
            position += 1
            var text: [UInt8] = []
            while position < bytes.count {
                let byte = bytes[position]
                position += 1
                switch byte {
                case UInt8(ascii: "\""): return String(decoding: text, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard position < bytes.count else { break }
                    text.append(bytes[position])
                    position += 1
                case UInt8(ascii: "\n"): throw error("a string runs past the end of its line")
                default: text.append(byte)
                }
            }
            throw error("a string is not closed")
        }

        private mutating func scalar() throws(SyntaxError) {
            let start = position
            while position < bytes.count, !" \t\r\n,:]}[{\"".utf8.contains(bytes[position]) { position += 1 }
            let word = String(decoding: bytes[start..<position], as: UTF8.self)
            guard ["true", "false", "null"].contains(word) || Double(word) != nil else {
                throw error(word.isEmpty ? "expected a value" : "'\(word.prefix(20))' is not a JSON value")
            }
        }

        private mutating func consume(_ character: Unicode.Scalar) -> Bool {
            guard position < bytes.count, bytes[position] == UInt8(ascii: character) else { return false }
            position += 1
            return true
        }
    }
}
