import Foundation
import ParleyCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Text to IPA phonemes with the `espeak-ng` program, run as one long-lived child process.
///
/// espeak-ng is GPL-3.0: Parley never links it, it only talks to the program over a socket.
/// Without `--stdin`, espeak-ng phonemises each line of its input as soon as the line arrives
/// and writes one line of IPA per clause. After each request a sentinel word follows; its known
/// phonemes mark where the answer ends. Requests are serialised (each takes about a
/// millisecond); a program that dies or stalls is replaced.
final class EspeakPhonemizer: @unchecked Sendable {  // `lock` guards `process` and every exchange with it.
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
                return try answer(String(line))
            } catch {
                // The program may have died since the last request (it is killed when the thread
                // that started it ends): once more, with a new one.
                return try answer(String(line))
            }
        }
    }

    /// The running program's answer, starting it first if needed; a program that fails is
    /// stopped and forgotten. Called under `lock`.
    private func answer(_ line: String) throws -> String {
        do {
            let process = try self.process ?? EspeakProcess(executable: executable, voice: voice)
            self.process = process
            return try process.ask(line)
        } catch {
            process?.stop()
            process = nil
            throw error
        }
    }
}

/// One running `espeak-ng`, spawned with `ChildProcess` (it dies with Parley), talking over
/// one end of a socket pair that is its stdin and stdout. Used under `EspeakPhonemizer.lock`.
private final class EspeakProcess {
    private let pid: pid_t
    /// Parley's end of the socket pair.
    private let socket: Int32
    private var buffer: [UInt8] = []
    /// The sentinel's phonemes, as this espeak-ng writes them.
    private var sentinelPhonemes = ""

    init(executable: String, voice: String) throws {
        guard let path = EspeakProgram.path(of: executable) else {
            throw ProviderError(.server, provider: "espeak-ng", message: "the espeak-ng program was not found (\(executable)); run scripts/setup")
        }
        var ends: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw ProviderError(.server, provider: "espeak-ng", message: "no socket pair for espeak-ng (errno \(errno))")
        }
        defer { close(ends[1]) }
        do {
            pid = try ChildProcess.spawn(executable: path, arguments: ["-q", "-v", voice, "--ipa"], streams: .socket(ends[1]))
        } catch {
            close(ends[0])
            throw ProviderError(.server, provider: "espeak-ng", message: "espeak-ng could not start: \(error)")
        }
        socket = ends[0]
        do {
            try send(EspeakPhonemizer.sentinel + "\n")
            sentinelPhonemes = try readLine()
        } catch {
            stop()
            throw error
        }
        guard !sentinelPhonemes.isEmpty else {
            stop()
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

    /// Ends the program (closing its stdin ends it; a stalled one is killed) and reaps it.
    func stop() {
        close(socket)
        kill(pid, SIGKILL)
        _ = ChildProcess.wait(for: pid)
    }

    private func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            // MSG_NOSIGNAL: a dead espeak-ng fails the write instead of raising SIGPIPE.
            let written = bytes[offset...].withUnsafeBytes { Foundation.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
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
            guard waitUntilReadable(socket, before: deadline) else {
                throw ProviderError(.timeout, provider: "espeak-ng", message: "espeak-ng did not answer within \(EspeakPhonemizer.answerTimeout)")
            }
            var chunk = [UInt8](repeating: 0, count: 4_096)
            let count = chunk.withUnsafeMutableBytes { read(socket, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                throw ProviderError(.server, provider: "espeak-ng", message: "espeak-ng exited")
            }
            buffer += chunk[..<count]
        }
    }
}
