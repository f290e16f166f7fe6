import Foundation
import ParleyTesting

#if canImport(Glibc)
import Glibc
#endif

/// `parley serve` as a real child process with remote providers on fake upstreams: started,
/// waited for until it is ready, killed with SIGKILL or stopped with SIGTERM.
///
/// `@unchecked Sendable`: `output` and `readyPort` are guarded by `lock`.
final class ServerProcess: @unchecked Sendable {
    let process: Subprocess
    let dataDirectory: URL
    /// Standard error (the JSON event log and start-up lines) goes to this file.
    let logFile: URL
    private let lock = NSLock()
    private var output = ""
    private let exited: AsyncStream<Int32>
    private var readyPort = 0
    /// The port from the "Parley is ready" line, once printed.
    var port: Int { lock.withLock { readyPort } }

    /// The server secret every instance runs with.
    static let secret = "reliability-server-secret-0123456789"

    /// The `parley` executable: `PARLEY_SERVE_EXECUTABLE` (the long soak uses a release
    /// build), else the debug build next to the tests.
    static func executable() throws -> URL {
        if let configured = ProcessInfo.processInfo.environment["PARLEY_SERVE_EXECUTABLE"] {
            guard FileManager.default.isExecutableFile(atPath: configured) else {
                throw ServerProcessError(description: "PARLEY_SERVE_EXECUTABLE: \(configured) is not an executable")
            }
            return URL(fileURLWithPath: configured)
        }
        let bundleDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let candidates = [
            bundleDirectory.appendingPathComponent("parley"),
            bundleDirectory.deletingLastPathComponent().appendingPathComponent("parley"),
            packageRoot.appendingPathComponent(".build/debug/parley"),
        ]
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw ServerProcessError(description: "the parley executable is not built (looked in \(candidates.map(\.path)))")
        }
        return found
    }

    /// The environment that points every provider at `upstreams` and sets the secret.
    static func environment(upstreams: FaultyUpstreams, secret: String? = ServerProcess.secret) -> [String: String] {
        var environment = [
            "PARLEY_ASR_URL": upstreams.transcription.baseURL.absoluteString, "PARLEY_ASR_MODEL": "whisper-1",
            "PARLEY_LLM_URL": upstreams.languageModel.baseURL.absoluteString, "PARLEY_LLM_MODEL": "gpt-4o-mini",
            "PARLEY_TTS_URL": upstreams.speech.baseURL.absoluteString, "PARLEY_TTS_MODEL": "tts-1",
            "PARLEY_ASR_API_KEY": "sk-reliability", "PARLEY_LLM_API_KEY": "sk-reliability", "PARLEY_TTS_API_KEY": "sk-reliability",
            "PARLEY_VAD": "energy",
        ]
        if let secret { environment["PARLEY_SERVER_SECRET"] = secret }
        return environment
    }

    /// Launches `parley serve arguments` with `environment` (and no other `PARLEY_*` setting)
    /// in a scratch working directory.
    init(arguments: [String], environment: [String: String], dataDirectory: URL) throws {
        self.dataDirectory = dataDirectory
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        logFile = dataDirectory.appendingPathComponent("serve-\(UUID().uuidString.prefix(8)).log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        process = Subprocess()
        process.executableURL = try Self.executable()
        process.arguments = ["serve"] + arguments
        var merged = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PARLEY_") }
        merged.merge(environment) { _, new in new }
        process.environment = merged
        process.currentDirectoryURL = dataDirectory
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = try FileHandle(forWritingTo: logFile)
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self, bufferingPolicy: .bufferingNewest(1))
        exited = stream
        process.terminationHandler = { continuation.yield($0.terminationStatus); continuation.finish() }
        try process.run()
        _ = PipeReader(stdout.fileHandleForReading) { [weak self] data in
            guard let self else { return }
            self.lock.withLock { self.output += String(decoding: data, as: UTF8.self) }
        }
    }

    /// Starts a server on a free port of a loopback address and waits until it is ready.
    static func start(dataDirectory: URL, upstreams: FaultyUpstreams, settings: [String: String] = [:], host: String = "127.0.0.1") async throws -> ServerProcess {
        let server = try ServerProcess(
            arguments: ["--host", host, "--port", "0", "--data-dir", dataDirectory.path],
            environment: environment(upstreams: upstreams).merging(settings) { $1 }, dataDirectory: dataDirectory
        )
        try await server.waitUntilReady()
        return server
    }

    /// Waits for "Parley is ready: open http://HOST:PORT/" and reads the port.
    func waitUntilReady(seconds: Double = 60) async throws {
        let ready = await ResourceProbe.eventually(within: seconds) { [self] in
            lock.withLock {
                guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("Parley is ready") }),
                      let portText = line.split(separator: ":").last?.split(separator: "/").first, let number = Int(portText) else { return false }
                readyPort = number
                return true
            } || !process.isRunning
        }
        guard ready, port > 0 else {
            throw ServerProcessError(description: "parley serve did not become ready: \(standardError.suffix(2_000))")
        }
    }

    /// What the server wrote to standard error so far.
    var standardError: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// The address from `--host`.
    var host: String {
        let arguments = process.arguments
        return arguments.firstIndex(of: "--host").flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil } ?? "127.0.0.1"
    }

    var baseURL: URL { URL(string: "http://\(host):\(port)")! }
    var pid: Int32 { process.processIdentifier }

    /// Kills the server with SIGKILL and waits until it is gone.
    func kill9() async {
        kill(process.processIdentifier, SIGKILL)
        _ = await exitStatus()
    }

    /// Asks the server to stop with SIGTERM and returns its exit status.
    func terminate() async -> Int32? {
        kill(process.processIdentifier, SIGTERM)
        return await exitStatus()
    }

    /// The exit status, once the process has ended.
    func exitStatus() async -> Int32? {
        for await status in exited { return status }
        return process.isRunning ? nil : process.terminationStatus
    }
}

/// `parley serve` could not be started.
struct ServerProcessError: Error, CustomStringConvertible {
    var description: String
}
