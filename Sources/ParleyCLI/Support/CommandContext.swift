import Foundation

/// What a command runs with: environment, working directory, input and the two outputs.
struct CommandContext: Sendable {
    /// The environment variables.
    var environment: [String: String]
    /// The directory relative paths are resolved against.
    var workingDirectory: URL
    /// Where results go (standard output).
    var output: TextOutput
    /// Where diagnostics, progress and errors go (standard error).
    var errorOutput: TextOutput
    /// Where text is read from (standard input).
    var input: TextInput

    /// Colours for results.
    var outputStyle: TerminalStyle { TerminalStyle(output: output, environment: environment) }
    /// Colours for diagnostics.
    var errorStyle: TerminalStyle { TerminalStyle(output: errorOutput, environment: environment) }

    /// The context of this process: its environment, directory, standard input and outputs.
    static func process() -> CommandContext {
        CommandContext(
            environment: ProcessInfo.processInfo.environment,
            workingDirectory: URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true),
            output: .fileDescriptor(STDOUT_FILENO),
            errorOutput: .fileDescriptor(STDERR_FILENO),
            input: .standardInput
        )
    }

    /// `path` as a file URL, relative paths taken from `workingDirectory`.
    func fileURL(_ path: String) -> URL {
        let expanded = (path as NSString).expandingTildeInPath
        return expanded.hasPrefix("/")
            ? URL(fileURLWithPath: expanded)
            : workingDirectory.appendingPathComponent(expanded)
    }

    /// The value of environment variable `name`, unless it is unset or blank.
    func environmentValue(_ name: String) -> String? {
        guard let value = environment[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else { return nil }
        return value
    }

    /// Writes a warning line to standard error.
    func warn(_ message: String) {
        errorOutput.line(errorStyle.yellow("warning:") + " " + message)
    }
}
