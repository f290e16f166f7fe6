import Foundation
import ParleyTesting

/// The built `parley` executable, run as a real child process.
enum ParleyProcess {
    /// Why a run could not complete.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The result of a run.
    struct Result: Sendable {
        var status: Int32
        var output: String
        var errorOutput: String
    }

    /// The `parley` executable built next to the test bundle (`swift build` builds it with the tests).
    static func executable() throws -> URL {
        let bundleDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let packageRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let candidates = [
            bundleDirectory.appendingPathComponent("parley"),
            bundleDirectory.deletingLastPathComponent().appendingPathComponent("parley"),
            packageRoot.appendingPathComponent(".build/debug/parley"),
        ]
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw Failure(description: "the parley executable is not built; run 'swift build' (looked in \(candidates.map(\.path)))")
        }
        return found
    }

    /// Runs `parley arguments` and waits for it to exit, killing it after `timeout`.
    static func run(
        _ arguments: [String],
        environment: [String: String] = [:],
        input: Data = Data(),
        directory: URL = FileManager.default.temporaryDirectory,
        timeout: Duration = .seconds(120)
    ) async throws -> Result {
        try await run(program: try executable(), arguments, environment: environment, input: input, directory: directory, timeout: timeout)
    }

    /// Runs `program arguments` with this process's environment (less `PARLEY_*`) and
    /// `environment`, and waits for it to exit, killing it after `timeout`.
    static func run(
        program: URL,
        _ arguments: [String],
        environment: [String: String] = [:],
        input: Data = Data(),
        directory: URL = FileManager.default.temporaryDirectory,
        timeout: Duration = .seconds(120)
    ) async throws -> Result {
        let process = Subprocess()
        process.executableURL = program
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PARLEY_") && $0.key != "NO_COLOR" }
        merged.merge(environment) { _, new in new }
        process.environment = merged
        process.currentDirectoryURL = directory
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr

        try process.run()
        async let output = readToEnd(stdout.fileHandleForReading)
        async let errorOutput = readToEnd(stderr.fileHandleForReading)
        Thread {
            try? stdin.fileHandleForWriting.write(contentsOf: input)
            try? stdin.fileHandleForWriting.close()
        }.start()

        let status = await process.exitStatus(within: timeout)
        guard let status else {
            process.terminate()
            throw Failure(description: "\(program.lastPathComponent) \(arguments.joined(separator: " ")) did not exit within \(timeout)")
        }
        return Result(status: status, output: await output, errorOutput: await errorOutput)
    }

    /// Reads a pipe to its end on a thread of its own.
    private static func readToEnd(_ handle: FileHandle) async -> String {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)) }.start()
        }
    }
}
