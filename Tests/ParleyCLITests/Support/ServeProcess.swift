import Foundation
import ParleyTesting

/// `parley serve` running as a child process, stopped with SIGTERM.
final class ServeProcess: @unchecked Sendable {
    // @unchecked Sendable: `process` and `lines` are set up before `start` returns and only read after;
    // the collected output lives in `CapturedText`, which has its own lock.
    private let process = Subprocess()
    private let standardOutput = Pipe()
    private let standardError = Pipe()
    private let errorOutput = CapturedText()
    /// Standard output lines as they arrive, once the process runs.
    private var lines = AsyncStream<String> { $0.finish() }

    /// The URL the server printed when it became ready, e.g. `http://127.0.0.1:41234/`.
    private(set) var url = ""

    private init(arguments: [String], environment: [String: String], directory: URL) throws {
        process.executableURL = try ParleyProcess.executable()
        process.arguments = ["serve"] + arguments
        var merged = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PARLEY_") && $0.key != "NO_COLOR" }
        merged.merge(environment) { _, new in new }
        process.environment = merged
        process.currentDirectoryURL = directory
        process.standardOutput = standardOutput
        process.standardError = standardError
        process.standardInput = FileHandle.nullDevice
    }

    /// Starts `parley serve arguments` and waits (up to `deadline`) for it to say it is ready.
    static func start(
        _ arguments: [String], environment: [String: String], directory: URL, deadline: Duration = .seconds(120)
    ) async throws -> ServeProcess {
        let server = try ServeProcess(arguments: arguments, environment: environment, directory: directory)
        try server.process.run()
        server.startReading()
        let ready = await withTaskGroup(of: String?.self) { group in
            group.addTask {
                for await line in server.lines where line.hasPrefix("Parley is ready: open ") {
                    return String(line.dropFirst("Parley is ready: open ".count))
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: deadline)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let ready else {
            server.process.terminate()
            throw ParleyProcess.Failure(description: "parley serve did not become ready: \(server.errorOutput.value)")
        }
        server.url = ready.hasSuffix("/") ? String(ready.dropLast()) : ready
        return server
    }

    /// Reads the running server's output: stdout line by line, stderr into `errorOutput`.
    private func startReading() {
        lines = PipeReader.lines(of: standardOutput.fileHandleForReading)
        let errorOutput = errorOutput
        _ = PipeReader(standardError.fileHandleForReading) { errorOutput.append(String(decoding: $0, as: UTF8.self)) }
    }

    /// Sends SIGTERM and returns the exit status and what the server wrote to standard error.
    func stop(deadline: Duration = .seconds(60)) async -> (status: Int32?, errorOutput: String) {
        process.terminate()
        let status = await process.exitStatus(within: deadline)
        if status == nil { kill(process.processIdentifier, SIGKILL) }
        return (status, errorOutput.value)
    }
}
