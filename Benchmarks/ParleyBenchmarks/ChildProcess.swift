import Foundation

/// A helper process a benchmark starts (the fake upstream, the benchmark server) and stops.
final class ChildProcess: Sendable {
    /// Why a child process did not come up.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let process: Process
    /// What the process printed as `listening on ADDRESS`.
    let address: String

    /// The process id.
    var pid: Int32 { process.processIdentifier }

    /// Starts `executable` with `arguments` and waits (up to `timeout`) for its
    /// `listening on ADDRESS` line; its standard error goes to `logPath`.
    init(executable: URL, arguments: [String], logPath: String, timeout: Duration = .seconds(20)) async throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: logPath)
        try process.run()
        self.process = process
        let reader = output.fileHandleForReading
        let address = try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask {
                var buffer = Data()
                while true {
                    let piece = reader.availableData
                    if piece.isEmpty { return nil }
                    buffer += piece
                    let text = String(decoding: buffer, as: UTF8.self)
                    if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on ") }) {
                        return String(line.dropFirst("listening on ".count))
                    }
                }
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            // On a timeout the reader is still blocked on the pipe: ending the process ends it.
            if first == nil { process.terminate() }
            return first
        }
        guard let address else {
            process.terminate()
            throw Failure(description: "\(executable.lastPathComponent) did not start (see \(logPath))")
        }
        self.address = address
    }

    /// Stops the process (SIGTERM) and waits for it.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    /// The executable named `name` next to this benchmark executable (same build folder).
    static func sibling(_ name: String) -> URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent(name)
    }
}
