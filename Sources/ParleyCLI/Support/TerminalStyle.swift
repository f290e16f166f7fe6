import Foundation

/// ANSI colours for one output, switched off unless it is a terminal and `NO_COLOR` is unset.
struct TerminalStyle: Sendable {
    /// Whether escape sequences are written.
    let isEnabled: Bool

    /// The style for `output`: colours only on a terminal, never with `NO_COLOR` or `TERM=dumb`.
    init(output: TextOutput, environment: [String: String]) {
        isEnabled = output.isTerminal && (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
    }

    /// `text` in bold.
    func bold(_ text: String) -> String { wrap(text, "1") }
    /// `text` dimmed.
    func dim(_ text: String) -> String { wrap(text, "2") }
    /// `text` in bold red.
    func error(_ text: String) -> String { wrap(text, "1;31") }
    /// `text` in green.
    func green(_ text: String) -> String { wrap(text, "32") }
    /// `text` in cyan.
    func cyan(_ text: String) -> String { wrap(text, "36") }
    /// `text` in yellow.
    func yellow(_ text: String) -> String { wrap(text, "33") }

    private func wrap(_ text: String, _ code: String) -> String {
        isEnabled ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }
}
