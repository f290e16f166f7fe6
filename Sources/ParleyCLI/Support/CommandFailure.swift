import Foundation

/// A command failed at run time: the tool prints `message` as one `error:` line and exits 1.
struct CommandFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, in one line; `nil` when the command already reported the details.
    var message: String?

    /// A failure to report as `error: <message>`.
    init(_ message: String) {
        self.message = message
    }

    /// A failure whose details the command has already written to standard error.
    static let alreadyReported = CommandFailure(message: nil)

    private init(message: String?) {
        self.message = message
    }

    var description: String { message ?? "failed" }
}
