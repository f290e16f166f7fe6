import Foundation
import ParleyCore
import ParleyNet

/// The server under load (issue 7): the benchmark server (`ParleyApp` with every provider at
/// the fake upstream, answering at once) in its own process, N realtime clients in this one,
/// each streaming turns of speech paced in real time in 20 ms `input_audio_buffer.append`
/// events, every client at its own phase (whole milliseconds) of the 20 ms tick (one sender
/// thread sends each chunk at its instant). Per turn: from sending the chunk that ended the
/// user's turn (the server's `speech_stopped` `audio_end_ms` tells which) to receiving the
/// first audio delta. The server's CPU and memory come from `/proc`; so does the fake
/// upstream's CPU, and this process's own CPU is the load clients': all three share the machine.
func runServerBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    let sessionCounts = quick ? [100, 300] : [100, 200, 300, 400, 500]
    let turns = quick ? 2 : 4
    var results: [BenchmarkResult] = []
    var sustained = 0
    for sessions in sessionCounts {
        let outcome = try await ServerLoad(sessions: sessions, turnsPerSession: turns).run()
        let p50 = percentile(outcome.latenciesMs, 50)
        let p99 = percentile(outcome.latenciesMs, 99)
        let expected = sessions * turns
        let allAnswered = outcome.latenciesMs.count == expected && outcome.connected == sessions
        if allAnswered, p99 <= 20 { sustained = max(sustained, sessions) }
        let label = "\(sessions) sessions"
        results.append(serverResult("end of speech -> first audio delta, \(label), p50", p50, "ms", "", nil))
        results.append(serverResult("end of speech -> first audio delta, \(label), p99", p99, "ms", "<= 20 ms", p99 <= 20))
        results.append(serverResult("turns answered, \(label)", Double(outcome.latenciesMs.count), "of \(expected)", "all", allAnswered))
        results.append(serverResult("server CPU per session-second, \(label)", outcome.serverCPUMillisecondsPerSessionSecond, "ms/s", "", nil))
        results.append(serverResult("load client / fake upstream CPU per session-second, \(label)", outcome.clientCPUMillisecondsPerSessionSecond, "ms/s", "", nil, detail: outcome.upstreamCPUMillisecondsPerSessionSecond, detailUnit: "ms/s upstream"))
        results.append(serverResult("server CPU used / waited for (run queue), \(label)", outcome.serverCores, "cores", "", nil, detail: outcome.serverWaitingCores, detailUnit: "cores waiting"))
        results.append(serverResult("server memory per idle session, \(label)", outcome.idleBytesPerSession / 1024, "KiB", "<= 1024 KiB", outcome.idleBytesPerSession <= 1_048_576))
        results.append(serverResult("server memory per active session, \(label)", outcome.activeBytesPerSession / 1024, "KiB", "", nil))
        for (stage, values) in outcome.stages.named {
            results.append(serverResult("server-side commit -> \(stage), \(label), p50 / p99", percentile(values, 50), "ms", "", nil, detail: percentile(values, 99)))
        }
        results.append(serverResult("client send lateness (max), \(label)", outcome.worstLatenessMs, "ms", "", nil))
    }
    results.append(serverResult("concurrent sessions sustained (p99 <= 20 ms, every turn answered)", Double(sustained), "sessions", ">= 300", sustained >= 300))
    return results
}

private func serverResult(
    _ name: String, _ value: Double, _ unit: String, _ target: String, _ meets: Bool?, detail: Double? = nil, detailUnit: String? = nil
) -> BenchmarkResult {
    let unitText = detail.map { String(format: "/ %.2f %@", $0, detailUnit ?? unit) } ?? unit
    return BenchmarkResult(area: "server", name: name, value: value, unit: unitText, target: target, meetsTarget: meets)
}

/// The server's own per-turn figures (`parley.turn_metrics`), measured from the commit.
struct ServerStages: Sendable {
    var transcriptionMs: [Double] = []
    var firstTokenMs: [Double] = []
    var firstAudioMs: [Double] = []

    /// The stages with their names, in pipeline order.
    var named: [(String, [Double])] {
        [("final transcript", transcriptionMs), ("first token", firstTokenMs), ("first audio", firstAudioMs)]
    }

    mutating func add(_ other: ServerStages) {
        transcriptionMs += other.transcriptionMs
        firstTokenMs += other.firstTokenMs
        firstAudioMs += other.firstAudioMs
    }
}

/// One load run against a fresh server process.
private struct ServerLoad {
    /// What the run measured.
    struct Outcome {
        var connected: Int
        var latenciesMs: [Double]
        var serverCPUMillisecondsPerSessionSecond: Double
        /// This process's CPU (the load clients) per session-second: it shares the machine.
        var clientCPUMillisecondsPerSessionSecond: Double
        /// The fake upstream's CPU per session-second: it shares the machine too.
        var upstreamCPUMillisecondsPerSessionSecond: Double
        var idleBytesPerSession: Double
        var activeBytesPerSession: Double
        var worstLatenessMs: Double
        var stages: ServerStages
        /// Cores the server used on average during the paced run.
        var serverCores: Double
        /// Cores' worth of time the server's threads were ready but not running (other work had the CPUs).
        var serverWaitingCores: Double
    }

    /// What one client measured.
    private struct ClientOutcome: Sendable {
        var latenciesMs: [Double] = []
        var stages = ServerStages()
    }

    let sessions: Int
    let turnsPerSession: Int
    private let audio = TurnAudio()

    init(sessions: Int, turnsPerSession: Int) {
        self.sessions = sessions
        self.turnsPerSession = turnsPerSession
    }

    func run() async throws -> Outcome {
        let logDirectory = FileManager.default.temporaryDirectory.path
        let upstream = try await ChildProcess(
            executable: ChildProcess.sibling("FakeUpstream"),
            arguments: ["--reply", InstantProviders.reply, "--speech-audio-ms", "200"],
            logPath: "\(logDirectory)/parley-bench-upstream.log"
        )
        defer { upstream.stop() }
        let server = try await ChildProcess(
            executable: URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath(),
            arguments: ["serve", "--upstream", upstream.address],
            logPath: "\(logDirectory)/parley-bench-server.log"
        )
        defer { server.stop() }
        guard let url = URL(string: server.address) else { throw ChildProcess.Failure(description: "bad server address \(server.address)") }

        let baseline = ProcessFigures.residentBytes(pid: server.pid) ?? 0
        let connections = await connect(to: url)
        try await Task.sleep(for: .milliseconds(300))
        let idle = ProcessFigures.residentBytes(pid: server.pid) ?? 0

        let chunkCount = audio.count * turnsPerSession
        let timeline = ResampledTimeline(chunkCount: chunkCount, outputRate: 16_000) { VoiceSessionProviders.sincResampler(from: $0, to: $1) }
        let messages = audio.chunks.map { #"{"type":"input_audio_buffer.append","audio":"\#(PCM16Buffer(samples: $0).base64EncodedString())"}"# }
        let start = ContinuousClock.now + .milliseconds(200)
        let cpuBefore = ProcessFigures.cpuSeconds(pid: server.pid) ?? 0
        let clientCPUBefore = ProcessFigures.ownCPUSeconds()
        let upstreamCPUBefore = ProcessFigures.cpuSeconds(pid: upstream.pid) ?? 0
        let waitBefore = ProcessFigures.runQueueWaitSeconds(pid: server.pid) ?? 0
        let runStart = ContinuousClock.now
        let peak = PeakSampler(pid: server.pid)
        let sampling = Task { await peak.run() }
        // Independent clients are not in step: each sends at its own phase of the 20 ms tick.
        // Phases are whole milliseconds, so the sender thread wakes once a millisecond, not once
        // per client: those wake-ups (and the network thread's) cost this process a fifth to a
        // third of its CPU at 100 to 300 sessions, CPU the server under test shares.
        let clients = connections.enumerated().map { index, connection in
            PacedSender.Client(
                connection: connection, sendTimes: SendTimes(count: chunkCount),
                firstTick: index * audio.count / max(connections.count, 1),
                phase: .milliseconds(index * TurnAudio.chunkMilliseconds / max(connections.count, 1))
            )
        }
        let (outcomes, worstLateness) = await withTaskGroup(of: ClientOutcome.self) { group in
            for client in clients {
                group.addTask { await Self.measure(client.connection, sendTimes: client.sendTimes, timeline: timeline) }
            }
            let lateness = await PacedSender.run(clients, messages: messages, chunkCount: chunkCount, start: start)
            return (await group.reduce(into: []) { $0.append($1) }, lateness)
        }
        sampling.cancel()
        let cpuSeconds = (ProcessFigures.cpuSeconds(pid: server.pid) ?? cpuBefore) - cpuBefore
        let clientCPUSeconds = ProcessFigures.ownCPUSeconds() - clientCPUBefore
        let upstreamCPUSeconds = (ProcessFigures.cpuSeconds(pid: upstream.pid) ?? upstreamCPUBefore) - upstreamCPUBefore
        let waitSeconds = (ProcessFigures.runQueueWaitSeconds(pid: server.pid) ?? waitBefore) - waitBefore
        let runSeconds = max((ContinuousClock.now - runStart).milliseconds / 1000, 0.001)
        let audioSeconds = Double(connections.count * chunkCount * TurnAudio.chunkMilliseconds) / 1000
        let count = Double(max(connections.count, 1))
        return Outcome(
            connected: connections.count,
            latenciesMs: outcomes.flatMap(\.latenciesMs),
            serverCPUMillisecondsPerSessionSecond: audioSeconds > 0 ? cpuSeconds * 1000 / audioSeconds : 0,
            clientCPUMillisecondsPerSessionSecond: audioSeconds > 0 ? clientCPUSeconds * 1000 / audioSeconds : 0,
            upstreamCPUMillisecondsPerSessionSecond: audioSeconds > 0 ? upstreamCPUSeconds * 1000 / audioSeconds : 0,
            idleBytesPerSession: Double(idle - baseline) / count,
            activeBytesPerSession: Double(max(peak.peak, idle) - baseline) / count,
            worstLatenessMs: worstLateness.milliseconds,
            stages: outcomes.reduce(into: ServerStages()) { $0.add($1.stages) },
            serverCores: cpuSeconds / runSeconds,
            serverWaitingCores: waitSeconds / runSeconds
        )
    }

    /// Opens the sessions, 50 at a time; a session that cannot connect is left out.
    private func connect(to url: URL) async -> [WebSocketConnection] {
        var connections: [WebSocketConnection] = []
        for first in stride(from: 0, to: sessions, by: 50) {
            let batch = await withTaskGroup(of: WebSocketConnection?.self) { group in
                for _ in first..<min(first + 50, sessions) {
                    group.addTask {
                        try? await WebSocketClient.connect(to: url, headers: ["Authorization": "Bearer \(BenchmarkServer.defaultSecret)"])
                    }
                }
                return await group.reduce(into: [WebSocketConnection]()) { if let connection = $1 { $0.append(connection) } }
            }
            connections += batch
        }
        return connections
    }

    private static let audioDeltaPrefix = #"{"type":"response.output_audio.delta""#
    private static let speechStoppedPrefix = #"{"type":"input_audio_buffer.speech_stopped""#
    private static let turnMetricsPrefix = #"{"type":"parley.turn_metrics""#

    /// For each turn: the chunk that ended it (from `audio_end_ms`) to the first audio delta;
    /// and the server's own stage figures.
    private static func measure(_ connection: WebSocketConnection, sendTimes: SendTimes, timeline: ResampledTimeline) async -> ClientOutcome {
        var outcome = ClientOutcome()
        var endingChunk: Int?
        for await message in connection.messages {
            guard case .text(let text) = message else { continue }
            if text.hasPrefix(audioDeltaPrefix) {
                guard let chunk = endingChunk, let sent = sendTimes[chunk] else { continue }
                outcome.latenciesMs.append((ContinuousClock.now - sent).milliseconds)
                endingChunk = nil
            } else if text.hasPrefix(speechStoppedPrefix),
                      let endMs = (try? JSONValue(parsing: text))?["audio_end_ms"]?.numberValue {
                endingChunk = timeline.chunkIndex(reaching: Int(endMs))
            } else if text.hasPrefix(turnMetricsPrefix), let metrics = try? JSONValue(parsing: text) {
                if let value = metrics["transcription_ms"]?.numberValue { outcome.stages.transcriptionMs.append(value) }
                if let value = metrics["first_token_ms"]?.numberValue { outcome.stages.firstTokenMs.append(value) }
                if let value = metrics["first_audio_ms"]?.numberValue { outcome.stages.firstAudioMs.append(value) }
            }
        }
        return outcome
    }
}

/// The load clients' audio: every client's chunks sent at their own real-time instants by one
/// thread, which sleeps until the next instant due and sends what is due (a client whose
/// send fails stops; each client's connection closes after its last chunk).
private enum PacedSender {
    /// One client: its connection, where its send instants go, the tick of its first chunk and
    /// its phase within every tick.
    struct Client: Sendable {
        var connection: WebSocketConnection
        var sendTimes: SendTimes
        var firstTick: Int
        var phase: Duration
    }

    /// Sends every chunk (`clients` in phase order) and returns the worst lateness.
    static func run(_ clients: [Client], messages: [String], chunkCount: Int, start: ContinuousClock.Instant) async -> Duration {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: send(clients, messages: messages, chunkCount: chunkCount, start: start))
            }
            thread.name = "paced-sender"
            thread.start()
        }
    }

    private static func send(_ clients: [Client], messages: [String], chunkCount: Int, start: ContinuousClock.Instant) -> Duration {
        let tick = Duration.milliseconds(TurnAudio.chunkMilliseconds)
        let ticks = (clients.map(\.firstTick).max() ?? 0) + chunkCount
        var sending = Array(repeating: true, count: clients.count)
        var worst = Duration.zero
        for tickIndex in 0..<ticks {
            let tickStart = start + tick * tickIndex
            for (index, client) in clients.enumerated() where sending[index] {
                let chunk = tickIndex - client.firstTick
                guard chunk >= 0, chunk < chunkCount else { continue }
                let deadline = tickStart + client.phase
                sleep(until: deadline)
                let now = ContinuousClock.now
                worst = max(worst, now - deadline)
                client.sendTimes.record(chunk, at: now)
                do {
                    try client.connection.send(.text(messages[chunk % messages.count]))
                } catch {
                    sending[index] = false
                }
                if !sending[index] || chunk == chunkCount - 1 { client.connection.close() }
            }
        }
        return worst
    }

    /// Sleeps until `deadline` unless it is less than 50 µs away.
    private static func sleep(until deadline: ContinuousClock.Instant) {
        let remaining = deadline - ContinuousClock.now
        guard remaining > .microseconds(50) else { return }
        let (seconds, attoseconds) = remaining.components
        var interval = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        nanosleep(&interval, nil)
    }
}

/// Samples a process's resident memory every 100 ms and keeps the peak.
///
/// `@unchecked Sendable`: `highest` is guarded by `lock`.
private final class PeakSampler: @unchecked Sendable {
    private let pid: Int32
    private let lock = NSLock()
    private var highest = 0

    init(pid: Int32) { self.pid = pid }

    /// The highest resident size seen, in bytes.
    var peak: Int { lock.withLock { highest } }

    /// Samples until cancelled.
    func run() async {
        while !Task.isCancelled {
            if let bytes = ProcessFigures.residentBytes(pid: pid) { lock.withLock { highest = max(highest, bytes) } }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }
}
