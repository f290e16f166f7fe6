import Foundation
@testable import ParleyCLI

/// Text a command wrote, collected in memory.
///
/// `@unchecked Sendable`: `text` is only touched while holding `lock`.
final class CapturedText: @unchecked Sendable {
    private let lock = NSLock()
    private var text = ""

    /// Appends `more`.
    func append(_ more: String) {
        lock.withLock { text += more }
    }

    /// Everything written so far.
    var value: String { lock.withLock { text } }
}

/// The result of running `parley` in process.
struct CommandRun: Sendable {
    /// The exit code.
    var status: Int32
    /// What went to standard output.
    var output: String
    /// What went to standard error.
    var errorOutput: String

    /// Runs `parley` with `arguments` in this process, with captured outputs.
    /// - Parameters:
    ///   - environment: the whole environment the command sees.
    ///   - input: standard input.
    ///   - terminal: whether the outputs claim to be terminals.
    ///   - directory: the working directory.
    static func run(
        _ arguments: [String],
        environment: [String: String] = [:],
        input: String = "",
        terminal: Bool = false,
        directory: URL = CommandRun.emptyDirectory
    ) async -> CommandRun {
        let (context, output, errorOutput) = capturing(environment: environment, input: input, terminal: terminal, directory: directory)
        let status = await ParleyCommandLine.run(arguments, context: context)
        return CommandRun(status: status, output: output.value, errorOutput: errorOutput.value)
    }

    /// A context whose outputs are captured.
    static func capturing(
        environment: [String: String] = [:],
        input: String = "",
        terminal: Bool = false,
        directory: URL = CommandRun.emptyDirectory
    ) -> (context: CommandContext, output: CapturedText, errorOutput: CapturedText) {
        let output = CapturedText()
        let errorOutput = CapturedText()
        let context = CommandContext(
            environment: environment,
            workingDirectory: directory,
            output: TextOutput(isTerminal: terminal) { output.append($0) },
            errorOutput: TextOutput(isTerminal: terminal) { errorOutput.append($0) },
            input: .text(input, isTerminal: terminal)
        )
        return (context, output, errorOutput)
    }

    /// An empty directory (no `.env`, no `.parley`) that runs use unless a test gives its own.
    static let emptyDirectory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("parley-cli-empty-\(UUID().uuidString)", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()
}

/// A fresh empty directory under the temporary directory, removed by `remove()`.
struct TemporaryDirectory: Sendable {
    /// The directory.
    let url: URL

    /// Creates the directory.
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("parley-cli-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of `name` inside the directory.
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Deletes the directory and everything in it.
    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
