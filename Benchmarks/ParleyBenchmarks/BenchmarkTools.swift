import Foundation

/// The C programs the benchmarks drive (`Benchmarks/RawLWS`, `Benchmarks/LoadClient`), built
/// by `scripts/build-bench-tools`.
enum BenchmarkTools {
    /// Builds the programs if needed; returns the folder holding them.
    static func folder() async throws -> URL {
        let script = repositoryRoot().appendingPathComponent("scripts/build-bench-tools")
        let output = try await runProcess(URL(fileURLWithPath: "/bin/bash"), [script.path])
        return URL(fileURLWithPath: output.trimmingCharacters(in: .whitespacesAndNewlines).components(separatedBy: "\n").last ?? "")
    }

    private static func repositoryRoot() -> URL {
        if let root = ProcessInfo.processInfo.environment["PARLEY_ROOT"] { return URL(fileURLWithPath: root) }
        // Benchmarks/ParleyBenchmarks/BenchmarkTools.swift → the repository root.
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }
}

/// A benchmark program failed or printed something unexpected.
struct BenchmarkToolError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// Runs a program to completion without blocking the cooperative thread pool (the server
/// under test needs it); returns its standard output.
func runProcess(_ executable: URL, _ arguments: [String]) async throws -> String {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let (text, status) = await remainingOutput(of: process, from: output)
    guard status == 0 else { throw BenchmarkToolError("\(executable.lastPathComponent) exited with \(status): \(text)") }
    return text
}

/// Reads a running child process's standard output to its end and waits for it to exit
/// (without blocking the cooperative thread pool); returns the output and the exit status.
func remainingOutput(of process: Process, from output: Pipe) async -> (text: String, status: Int32) {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            continuation.resume(returning: (String(decoding: data, as: UTF8.self), process.terminationStatus))
        }
    }
}

/// Reads a child process's first line of output (without blocking the cooperative thread pool).
func readFirstLine(_ handle: FileHandle) async -> String {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
            var bytes = Data()
            while !bytes.contains(UInt8(ascii: "\n")) {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                bytes.append(chunk)
            }
            let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
            continuation.resume(returning: line.trimmingCharacters(in: .whitespaces))
        }
    }
}
