import Foundation
import ParleyCore
import ParleyNet

/// The server under load (issue 7): the benchmark server (`ParleyApp` with every provider at
/// the fake upstream, answering at once) in its own process, N realtime clients in this one,
/// each streaming turns of speech paced in real time in 20 ms `input_audio_buffer.append`
/// events. Per turn: from sending the chunk that ended the user's turn (the server's
/// `speech_stopped` `audio_end_ms` tells which) to receiving the first audio delta. The server's
/// CPU and memory come from `/proc`.
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
        var worstLatenessMs = 0.0
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
        let waitBefore = ProcessFigures.runQueueWaitSeconds(pid: server.pid) ?? 0
        let runStart = ContinuousClock.now
        let peak = PeakSampler(pid: server.pid)
        let sampling = Task { await peak.run() }
        let outcomes = await withTaskGroup(of: ClientOutcome.self) { group in
            for (index, connection) in connections.enumerated() {
                let offset = index * audio.count / max(connections.count, 1)
                let clientStart = start + .milliseconds(offset * TurnAudio.chunkMilliseconds)
                group.addTask {
                    await runClient(connection, messages: messages, timeline: timeline, chunkCount: chunkCount, start: clientStart)
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        sampling.cancel()
        let cpuSeconds = (ProcessFigures.cpuSeconds(pid: server.pid) ?? cpuBefore) - cpuBefore
        let waitSeconds = (ProcessFigures.runQueueWaitSeconds(pid: server.pid) ?? waitBefore) - waitBefore
        let runSeconds = max((ContinuousClock.now - runStart).milliseconds / 1000, 0.001)
        let audioSeconds = Double(connections.count * chunkCount * TurnAudio.chunkMilliseconds) / 1000
        let count = Double(max(connections.count, 1))
        return Outcome(
            connected: connections.count,
            latenciesMs: outcomes.flatMap(\.latenciesMs),
            serverCPUMillisecondsPerSessionSecond: audioSeconds > 0 ? cpuSeconds * 1000 / audioSeconds : 0,
            idleBytesPerSession: Double(idle - baseline) / count,
            activeBytesPerSession: Double(max(peak.peak, idle) - baseline) / count,
            worstLatenessMs: outcomes.map(\.worstLatenessMs).max() ?? 0,
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

    private func runClient(
        _ connection: WebSocketConnection, messages: [String], timeline: ResampledTimeline, chunkCount: Int, start: ContinuousClock.Instant
    ) async -> ClientOutcome {
        let sendTimes = SendTimes(count: chunkCount)
        async let measured = Self.measure(connection, sendTimes: sendTimes, timeline: timeline)
        var worstLateness = Duration.zero
        for index in 0..<chunkCount {
            let deadline = start + .milliseconds(index * TurnAudio.chunkMilliseconds)
            try? await Task.sleep(until: deadline, clock: .continuous)
            let now = ContinuousClock.now
            worstLateness = max(worstLateness, now - deadline)
            sendTimes.record(index, at: now)
            do {
                try connection.send(.text(messages[index % messages.count]))
            } catch {
                break
            }
        }
        connection.close()
        var outcome = await measured
        outcome.worstLatenessMs = worstLateness.milliseconds
        return outcome
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
