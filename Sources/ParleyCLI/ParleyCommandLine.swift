import Foundation
import ParleyCore
import ParleyNet

/// The `parley` command-line tool.
///
/// ```swift
/// exit(await ParleyCommandLine.run(Array(CommandLine.arguments.dropFirst())))
/// ```
public enum ParleyCommandLine {
    /// The version printed by `parley --version`.
    public static let version = "0.1.0"

    /// The exit code of a command that succeeded.
    static let success: Int32 = 0
    /// The exit code of a runtime failure.
    static let failure: Int32 = 1
    /// The exit code of a usage error (`EX_USAGE`).
    static let usageError: Int32 = 64

    /// Runs the tool with `arguments` (without the program name) on this process's standard
    /// input, output and error, and returns the exit code: 0 on success, 64 for a usage error,
    /// 1 for a runtime failure.
    public static func run(_ arguments: [String]) async -> Int32 {
        await run(arguments, context: .process())
    }

    /// Runs the tool with `arguments` in `context`.
    static func run(_ arguments: [String], context: CommandContext) async -> Int32 {
        let formatter = HelpFormatter(toolName: CommandCatalog.toolName)
        do {
            switch try CommandLineParser(root: CommandCatalog.root).parse(arguments) {
            case .version:
                context.output.line("\(CommandCatalog.toolName) \(version)")
            case .help(let path):
                let spec = CommandCatalog.spec(at: path) ?? CommandCatalog.root
                context.output.write(formatter.help(spec, path: path))
            case .run(let spec, let parsed):
                guard let command = spec.command else {
                    throw UsageError("'\(parsed.commandPath.joined(separator: " "))' is not a command", commandPath: [])
                }
                let parsedCommand = try command.init(parsed)
                try await parsedCommand.run(command.readsDotEnvFile ? context.includingDotEnvFile() : context)
            }
            return success
        } catch let error as UsageError {
            let spec = CommandCatalog.spec(at: error.commandPath) ?? CommandCatalog.root
            report(error.message, context: context)
            context.errorOutput.line("Usage: \(formatter.usage(spec, path: error.commandPath))")
            return usageError
        } catch let error as CommandFailure {
            if let message = error.message { report(message, context: context) }
            return failure
        } catch {
            report(describe(error), context: context)
            return failure
        }
    }

    /// Writes `error: <message>` to standard error.
    private static func report(_ message: String, context: CommandContext) {
        context.errorOutput.line(context.errorStyle.error("error:") + " " + message)
    }

    /// One line about an error no command turned into a `CommandFailure`.
    static func describe(_ error: any Error) -> String {
        switch error {
        case let error as ProviderError: "\(error.provider): \(error.message)"
        case let error as HTTPClientError: error.message
        case let error as CustomStringConvertible: error.description
        default: (error as NSError).localizedDescription
        }
    }
}
