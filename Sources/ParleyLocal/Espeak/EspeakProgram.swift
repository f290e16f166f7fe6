import Foundation
import ParleyCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `espeak-ng` program, run to completion for one request: text in on its stdin, its
/// whole output back. espeak-ng is GPL-3.0, so Parley never links it; this is the only way
/// besides the phonemizer's long-lived process that Parley uses it.
enum EspeakProgram {
    /// The longest a run may take before it is killed.
    static let runTimeout: Duration = .seconds(20)

    /// The path of `executable`: itself when it holds a slash, else the first match in `PATH`.
    static func path(of executable: String) -> String? {
        if executable.contains("/") { return FileManager.default.isExecutableFile(atPath: executable) ? executable : nil }
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":")
        return directories.map { "\($0)/\(executable)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs the program at `path` with `arguments`, writes `input` to its stdin, closes it and
    /// returns everything it writes to stdout. Blocks the calling thread, which must outlive
    /// the run (the child dies with the thread that spawned it; see `ChildProcess`).
    /// - Throws: `ProviderError` when it cannot start, takes longer than `runTimeout`, or fails.
    static func run(_ path: String, arguments: [String], input: String) throws -> [UInt8] {
        var ends: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw ProviderError(.server, provider: "espeak-ng", message: "no socket pair for espeak-ng (errno \(errno))")
        }
        let socket = ends[0]
        defer { close(socket) }
        let pid: pid_t
        do {
            pid = try ChildProcess.spawn(executable: path, arguments: arguments, streams: .socket(ends[1]))
            close(ends[1])
        } catch {
            close(ends[1])
            throw ProviderError(.server, provider: "espeak-ng", message: "espeak-ng could not start: \(error)")
        }
        var output: [UInt8] = []
        do {
            try write(Array(input.utf8), to: socket)
            shutdown(socket, Int32(SHUT_WR))
            output = try readAll(from: socket)
        } catch {
            kill(pid, SIGKILL)
            _ = ChildProcess.wait(for: pid)
            throw error
        }
        let status = ChildProcess.wait(for: pid)
        guard status == .exited(0) else {
            throw ProviderError(.server, provider: "espeak-ng", message: "espeak-ng \(status)")
        }
        return output
    }

    private static func write(_ bytes: [UInt8], to socket: Int32) throws {
        var offset = 0
        while offset < bytes.count {
            // MSG_NOSIGNAL: a dead espeak-ng fails the write instead of raising SIGPIPE.
            let written = bytes[offset...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                throw ProviderError(.server, provider: "espeak-ng", message: "espeak-ng stopped taking text (errno \(errno))")
            }
            offset += written
        }
    }

    /// Everything until the program closes its end, within `runTimeout`.
    private static func readAll(from socket: Int32) throws -> [UInt8] {
        let deadline = ContinuousClock.now + runTimeout
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            guard waitUntilReadable(socket, before: deadline) else {
                throw ProviderError(.timeout, provider: "espeak-ng", message: "espeak-ng did not finish within \(runTimeout)")
            }
            let count = chunk.withUnsafeMutableBytes { read(socket, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw ProviderError(.server, provider: "espeak-ng", message: "reading espeak-ng's output failed (errno \(errno))") }
            if count == 0 { return output }
            output += chunk[..<count]
        }
    }
}
