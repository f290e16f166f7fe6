import Foundation

/// The lines that show a tool running, for `chat` and `talk`: `→ calculate {"expression":"6*7"}`
/// when it starts and `← calculate done: 42` when it ends.
enum ToolActivityText {
    /// The longest argument or output text shown.
    static let limit = 200

    /// The line for a tool that started.
    static func started(name: String, arguments: String?) -> String {
        "→ \(name)" + (arguments.map { " \(clip($0))" } ?? "")
    }

    /// The line for a tool that finished.
    static func finished(name: String, output: String?, isError: Bool) -> String {
        "← \(name) \(isError ? "failed" : "done")" + (output.map { ": \(clip($0))" } ?? "")
    }

    /// `text` on one line, cut to `limit` characters.
    private static func clip(_ text: String) -> String {
        let line = text.replacingOccurrences(of: "\n", with: " ")
        return line.count > limit ? line.prefix(limit) + "…" : line
    }
}
