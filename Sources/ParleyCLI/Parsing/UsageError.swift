import Foundation

/// The command line is wrong: the tool prints `message` and the command's usage line and exits 64.
struct UsageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, in one line, e.g. `missing option --output <file>`.
    var message: String
    /// The command whose usage line is shown (names after `parley`; empty for the tool itself).
    var commandPath: [String]

    /// Creates a usage error for the command at `commandPath`.
    init(_ message: String, commandPath: [String]) {
        self.message = message
        self.commandPath = commandPath
    }

    var description: String { message }
}
