import Foundation
import ParleyCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Text to IPA phonemes with the `espeak-ng` program, run as one long-lived child process.
///
/// espeak-ng is GPL-3.0: Parley never links it, it only talks to the program through pipes.
/// Without `--stdin`, espeak-ng phonemises each line of its input as soon as the line arrives
/// and writes one line of IPA per clause. After each request a sentinel word follows; its known
/// phonemes mark where the answer ends. Requests are serialised (each takes about a
/// millisecond); a process that dies or stalls is replaced at the next request.
final class EspeakPhonemizer: @unchecked Sendable {  // `lock` guards `process` and every pipe read and write.
    /// The word whose phonemes end every answer. Removed from requests.
    static let sentinel = "parleysentinel"
    /// The longest wait for espeak-ng's answer.
    static let answerTimeout: Duration = .seconds(5)

    private let executable: String
    private let voice: String
    private let lock = NSLock()
    private var process: EspeakProcess?

    /// Prepares a phonemizer for `voice`; the program starts with the first request.
    /// - Parameters:
    ///   - executable: the `espeak-ng` program, a path or a name looked up in `PATH`.
    ///   - voice: an espeak-ng voice, for example `en-us`.
    init(executable: String = "espeak-ng", voice: String) {
        self.executable = executable
        self.voice = voice
    }

    deinit { process?.stop() }

    /// The phonemes of `text` (one clause, or several joined by spaces).
    /// - Throws: `ProviderError` when espeak-ng cannot be started or does not answer.
    func phonemes(of text: String) throws -> String {
        let line = text.replacingOccurrences(of: Self.sentinel, with: " ", options: .caseInsensitive)
            .map { $0.isNewline || $0.unicodeScalars.allSatisfy({ $0.properties.generalCategory == .control }) ? " " : $0 }
        return try lock.withLock {
            do {
                let process = try self.process ?? EspeakProcess(executable: executable, voice: voice)
                self.process = process
                return try process.ask(String(line))
            } catch {
                process?.stop()
                process = nil
                throw error
            }
        }
    }
}

/// One running `espeak-ng` and its pipes. Used under `EspeakPhonemizer.lock`.
private final class EspeakProcess {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffer: [UInt8] = []
    /// The sentinel's phonemes, as this espeak-ng writes them.
    private var sentinelPhonemes = ""

    init(executable: String, voice: String) throws {
        let path = executable.contains("/") ? executable : Self.lookUp(executable)
        guard let path, FileManager.default.isExecutableFile(atPath: path) else {
            throw ProviderError(.server, provider: "espeak-ng", message: "the espeak-ng program was not found (\(executable)); run scripts/setup")
        }
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["-q", "-v", voice, "--ipa"]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw ProviderError(.server, provider: "espeak-ng", message: "espeak-ng could not start: \(error)")
        }
        signal(SIGPIPE, SIG_IGN)  // A dead espeak-ng must fail a write, not end Parley.
        try send(EspeakPhonemizer.sentinel + "\n")
        sentinelPhonemes = try readLine()
        guard !sentinelPhonemes.isEmpty else {
            throw ProviderError(.server, provider: "espeak-ng", message: "espeak-ng gave no phonemes for voice \(voice)")
        }
    }

    /// The phonemes of one line of text: espeak-ng's lines for it, joined by spaces.
    func ask(_ line: String) throws -> String {
        try send(line + "\n" + EspeakPhonemizer.sentinel + "\n")
        var lines: [String] = []
        while true {
            let answer = try readLine()
            if answer == sentinelPhonemes { return lines.joined(separator: " ") }
            if !answer.isEmpty { lines.append(answer) }
        }
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
    }

    private func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(input.fileHandleForWriting.fileDescriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                throw ProviderError(.server, provider: "espeak-ng", message: "espeak-ng stopped taking text (errno \(errno))")
            }
            offset += written
        }
    }

    /// The next line of output, trimmed; waits at most `answerTimeout` in all.
    private func readLine() throws -> String {
        let deadline = ContinuousClock.now + EspeakPhonemizer.answerTimeout
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line.trimmingCharacters(in: .whitespaces)
            }
            let remaining = ContinuousClock.now.duration(to: deadline)
            let milliseconds = Int32(max(0, remaining.components.seconds * 1_000 + remaining.components.attoseconds / 1_000_000_000_000_000))
            var descriptor = pollfd(fd: output.fileHandleForReading.fileDescriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else {
                throw ProviderError(.timeout, provider: "espeak-ng", message: "espeak-ng did not answer within \(EspeakPhonemizer.answerTimeout)")
            }
            var chunk = [UInt8](repeating: 0, count: 4_096)
            let count = chunk.withUnsafeMutableBytes { read(descriptor.fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                throw ProviderError(.server, provider: "espeak-ng", message: "espeak-ng exited")
            }
            buffer += chunk[..<count]
        }
    }

    private static func lookUp(_ name: String) -> String? {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":")
        return directories.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
