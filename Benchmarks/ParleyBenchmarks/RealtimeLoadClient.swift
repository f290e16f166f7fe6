import Foundation

/// The server benchmark's load: `realtime_load_client` (`Benchmarks/LoadClient`) in its own
/// process, N realtime sessions streaming turns of audio paced in real time from one thread of
/// plain C. It shares the machine with the server under test, so the lighter it is the more
/// the figures say about the server.
final class RealtimeLoadClient {
    /// What a run measured; times are microseconds after the run's start.
    struct Report {
        /// Per session, when each chunk was handed to the socket.
        var sentMicroseconds: [[Double]] = []
        /// Each answered turn: the session, its `speech_stopped` `audio_end_ms`, and when the
        /// first audio delta after it arrived.
        var turns: [(session: Int, audioEndMs: Int, firstAudioMicroseconds: Double)] = []
        /// Each `parley.turn_metrics` event, as received.
        var turnMetricsEvents: [String] = []
        /// How late the latest send was.
        var worstLatenessMicroseconds: Double = 0
        /// The client's CPU time during the run.
        var cpuSeconds: Double = 0
        /// The run's start, in CLOCK_MONOTONIC microseconds (what the times above count from).
        var startMicroseconds: Double = 0
    }

    private let process: Process
    private let input: Pipe
    private let output: Pipe
    /// Sessions that connected.
    let connected: Int

    private init(process: Process, input: Pipe, output: Pipe, connected: Int) {
        self.process = process
        self.input = input
        self.output = output
        self.connected = connected
    }

    /// Starts the client in `folder` (see `BenchmarkTools`) and returns once it has opened
    /// `sessions` sessions to `url` (those that could not connect are left out).
    /// `messages` are the `input_audio_buffer.append` events of one turn, in order.
    static func connect(
        folder: URL, url: URL, token: String, sessions: Int, messages: [String], chunkCount: Int, turnChunks: Int
    ) async throws -> RealtimeLoadClient {
        try await connect(
            folder: folder, servers: ["127.0.0.1:\(url.port ?? 80)"], path: url.path, token: token, sessions: sessions,
            messages: messages, chunkCount: chunkCount, turnChunks: turnChunks)
    }

    /// Starts the client with its sessions spread round-robin over `servers` (`ADDRESS:PORT`,
    /// IPv4), session i to server i mod n, as a load balancer would; a `%d` in `path` becomes
    /// the session's number (an instance of its own each, for example).
    static func connect(
        folder: URL, servers: [String], path: String, token: String, sessions: Int, messages: [String], chunkCount: Int, turnChunks: Int
    ) async throws -> RealtimeLoadClient {
        let messagesFile = FileManager.default.temporaryDirectory.appendingPathComponent("parley-bench-messages-\(getpid()).txt")
        try messages.joined(separator: "\n").write(to: messagesFile, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = folder.appendingPathComponent("realtime_load_client")
        process.arguments = [
            // Parley's own events are opt-in; the stage figures come from `parley.turn_metrics`.
            servers.joined(separator: ","), path + (path.contains("?") ? "&" : "?") + "parley_events=true", token, "\(sessions)", messagesFile.path,
            "\(chunkCount)", "\(TurnAudio.chunkMilliseconds)", "\(turnChunks)",
        ]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        // The client prints nothing after this line until it is told to start, and it has read
        // the messages by then.
        let line = await readFirstLine(output.fileHandleForReading)
        try? FileManager.default.removeItem(at: messagesFile)
        guard line.hasPrefix("connected "), let connected = Int(line.dropFirst("connected ".count)) else {
            process.terminate()
            throw BenchmarkToolError("realtime_load_client did not connect: \(line)")
        }
        return RealtimeLoadClient(process: process, input: input, output: output, connected: connected)
    }

    /// Starts the paced run and returns what it measured once every session has ended.
    func run() async throws -> Report {
        input.fileHandleForWriting.write(Data("go\n".utf8))
        let (text, status) = await remainingOutput(of: process, from: output)
        guard status == 0 else { throw BenchmarkToolError("realtime_load_client exited with \(status)") }
        return Self.parse(text, sessions: connected)
    }

    private static func parse(_ text: String, sessions: Int) -> Report {
        var report = Report()
        report.sentMicroseconds = Array(repeating: [], count: sessions)
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 2)
            guard fields.count >= 2 else { continue }
            switch fields[0] {
            case "sent":
                let values = line.split(separator: " ").dropFirst().compactMap { Double($0) }
                if let session = values.first.map(Int.init), session >= 0, session < sessions {
                    report.sentMicroseconds[session] = Array(values.dropFirst())
                }
            case "turn":
                let values = line.split(separator: " ").dropFirst().compactMap { Double($0) }
                if values.count == 3 { report.turns.append((Int(values[0]), Int(values[1]), values[2])) }
            case "metrics":
                if fields.count == 3 { report.turnMetricsEvents.append(String(fields[2])) }
            case "lateness_us": report.worstLatenessMicroseconds = Double(fields[1]) ?? 0
            case "cpu_seconds": report.cpuSeconds = Double(fields[1]) ?? 0
            case "start_us": report.startMicroseconds = Double(fields[1]) ?? 0
            default: continue
            }
        }
        return report
    }
}
