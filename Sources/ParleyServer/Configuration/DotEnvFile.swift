import Foundation

/// Reads `KEY=value` lines from a `.env` file: `#` comments, blank lines, optional `export `,
/// and values in single or double quotes.
public enum DotEnvFile {
    /// A line of a `.env` file that could not be read.
    public struct SyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
        public var line: Int
        public var text: String
        public var description: String { ".env line \(line): expected KEY=value, got \"\(text)\"" }
    }

    /// Parses the contents of a `.env` file.
    /// - Throws: `SyntaxError` for the first line that is not a comment, blank or `KEY=value`.
    public static func parse(_ contents: String) throws(SyntaxError) -> [String: String] {
        var values: [String: String] = [:]
        for (index, rawLine) in contents.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.hasSuffix("\r") { line.removeLast() }
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("export ") { line = String(line.dropFirst(7)).trimmingCharacters(in: .whitespaces) }
            guard let equals = line.firstIndex(of: "=") else { throw SyntaxError(line: index + 1, text: line) }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            guard !key.isEmpty, key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                throw SyntaxError(line: index + 1, text: line)
            }
            var value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, let first = value.first, first == "\"" || first == "'", value.last == first {
                value = String(value.dropFirst().dropLast())
            } else if let comment = value.range(of: " #") {
                value = value[..<comment.lowerBound].trimmingCharacters(in: .whitespaces)
            }
            values[key] = value
        }
        return values
    }
}
