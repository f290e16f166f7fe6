import Foundation
import ParleyCore

/// The server under load (issues 7 and 23), in two profiles (`ServerLoadProfile`): the
/// defaults a user gets (Silero VAD, real synthesised speech, an upstream with realistic
/// delays), timed from the chunk holding the last voiced sample of each question to the first
/// audio delta, with a 1 s p99 limit; and the pipeline overhead (energy VAD, an upstream that
/// answers at once, synthetic speech), timed from the chunk that ended the turn (whose arrival
/// let the server's input reach `speech_stopped.audio_end_ms`), with a 20 ms p99 limit.
///
/// Each run: the benchmark server (`ParleyBenchmarks serve`) in its own process, and N
/// realtime clients in the load client's (`RealtimeLoadClient`), each streaming turns paced in
/// real time in 20 ms `input_audio_buffer.append` events, every client at its own phase (whole
/// milliseconds) of the 20 ms tick. The server's CPU and memory and the fake upstream's CPU
/// come from `/proc`, the load client reports its own: all three share the machine.
///
/// `host_slowdown_probe` runs beside each load and reports when the host ran the CPUs slower
/// (`HostSlowdownProbe`). Besides the p99 over every turn, which the target is judged on, the
/// benchmark prints the p99 over the turns that ended away from those stretches: from 20 ms
/// before one (a turn under way) to 100 ms after it (the work that queued up meanwhile).
func runServerBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    var results: [BenchmarkResult] = []
    for profile in [try await ServerLoadProfile.defaults(quick: quick), ServerLoadProfile.pipelineOverhead(quick: quick)] {
        results += try await measure(profile, turns: quick ? 2 : 4)
    }
    let idle = try await HostSlowdownProbe.measureIdle(folder: try await BenchmarkTools.folder(), seconds: quick ? 3 : 10)
    results.append(serverResult(
        "machine (idle, nothing else running): host slow stretches, share of the time / worst slowdown", idle.slowPercent, "%", "", nil,
        detail: idle.worstRatio, detailUnit: "times slower"))
    results.append(serverResult(
        "machine (idle, nothing else running): host slow stretches, count / longest", Double(idle.stretches.count), "stretches", "", nil,
        detail: idle.stretches.map { ($0.endMicroseconds - $0.startMicroseconds) / 1000 }.max() ?? 0, detailUnit: "ms longest"))
    return results
}

/// The figures of one profile at each of its session counts, and the most sessions it sustained.
private func measure(_ profile: ServerLoadProfile, turns: Int) async throws -> [BenchmarkResult] {
    var results: [BenchmarkResult] = []
    var sustained = 0
    var sustainedAwayFromSlowStretches = 0
    let limit = profile.p99LimitMs
    let limitText = "<= \(Int(limit)) ms"
    for sessions in profile.sessionCounts {
        let outcome = try await ServerLoad(sessions: sessions, turnsPerSession: turns, profile: profile).run()
        let latencies = outcome.turns.map(\.latencyMs)
        let p50 = percentile(latencies, 50)
        let p99 = percentile(latencies, 99)
        let expected = sessions * turns
        let allAnswered = latencies.count == expected && outcome.connected == sessions
        if allAnswered, p99 <= limit { sustained = max(sustained, sessions) }
        let awayFromSlowStretches = outcome.turns.filter {
            !outcome.hostSlowdowns.isNearSlowStretch($0.endOfSpeechMicroseconds, before: 20_000, after: 100_000)
        }.map(\.latencyMs)
        let p99AwayFromSlowStretches = percentile(awayFromSlowStretches, 99)
        if allAnswered, p99AwayFromSlowStretches <= limit { sustainedAwayFromSlowStretches = max(sustainedAwayFromSlowStretches, sessions) }
        let label = "\(profile.name), \(sessions) sessions"
        let latency = "\(profile.name): \(profile.latencyName), \(sessions) sessions"
        results.append(serverResult("\(latency), p50", p50, "ms", "", nil))
        results.append(serverResult("\(latency), p99", p99, "ms", limitText, p99 <= limit))
        results.append(serverResult(
            "host slow stretches during the run, \(label): share of the time / worst slowdown", outcome.hostSlowdowns.slowPercent, "%", "", nil,
            detail: outcome.hostSlowdowns.worstRatio, detailUnit: "times slower"))
        results.append(serverResult(
            "\(latency), p99 of the turns away from host slow stretches / share of turns",
            p99AwayFromSlowStretches, "ms", "", nil,
            detail: latencies.isEmpty ? 0 : Double(awayFromSlowStretches.count) * 100 / Double(latencies.count), detailUnit: "% of turns"))
        results.append(serverResult("turns answered, \(label)", Double(latencies.count), "of \(expected)", "all", allAnswered))
        results.append(serverResult("server CPU per session-second, \(label)", outcome.serverCPUMillisecondsPerSessionSecond, "ms/s", "", nil))
        results.append(serverResult("load client / fake upstream CPU per session-second, \(label)", outcome.clientCPUMillisecondsPerSessionSecond, "ms/s", "", nil, detail: outcome.upstreamCPUMillisecondsPerSessionSecond, detailUnit: "ms/s upstream"))
        results.append(serverResult("server CPU used / waited for (run queue), \(label)", outcome.serverCores, "cores", "", nil, detail: outcome.serverWaitingCores, detailUnit: "cores waiting"))
        results.append(serverResult("server memory per idle session, \(label)", outcome.idleBytesPerSession / 1024, "KiB", "<= 1024 KiB", outcome.idleBytesPerSession <= 1_048_576))
        results.append(serverResult("server memory per active session, \(label)", outcome.activeBytesPerSession / 1024, "KiB", "", nil))
        for (stage, values) in outcome.stages.named {
            results.append(serverResult(
                "server-side commit -> \(stage) (0 when ready before the commit), \(label), p50 / p99", percentile(values, 50), "ms", "", nil,
                detail: percentile(values, 99)))
        }
        results.append(serverResult("client send lateness (max), \(label)", outcome.worstLatenessMs, "ms", "", nil))
    }
    results.append(serverResult(
        "\(profile.name): concurrent sessions sustained (p99 \(limitText), every turn answered)", Double(sustained), "sessions",
        profile.sustainedTarget.map { ">= \($0)" } ?? "", profile.sustainedTarget.map { sustained >= $0 }))
    results.append(serverResult(
        "\(profile.name): concurrent sessions sustained away from host slow stretches (their p99 \(limitText), every turn answered)",
        Double(sustainedAwayFromSlowStretches), "sessions", "", nil))
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

/// Where a load run's sessions go: one benchmark server on 127.0.0.1 (the `server` area), or
/// `nodeCount` cluster nodes on 127.0.0.2, 127.0.0.3, … sharing one PostgreSQL, the sessions
/// spread over them round-robin as a load balancer would (the `cluster-capacity` area).
struct ServerTopology: Sendable {
    var nodeCount = 1
    /// Cluster mode: the nodes' database.
    var databaseURL: String?
    /// The realtime path; a `%d` becomes the session's number (an instance of its own each).
    var path = "/v1/realtime"

    /// Options of `ParleyBenchmarks serve` for node `index`.
    func serverArguments(node index: Int) -> [String] {
        guard let databaseURL else { return [] }
        // A cluster maximum far above the load: every admission still takes the advisory lock and counts.
        return ["--host", "127.0.0.\(2 + index)", "--database-url", databaseURL, "--cluster-max-sessions", "100000"]
    }
}

/// One load run against fresh server processes.
struct ServerLoad {
    /// What the run measured.
    struct Outcome {
        /// One answered turn: when the chunk that ended it was sent (CLOCK_MONOTONIC
        /// microseconds) and how long its first audio took from there.
        struct Turn {
            var endOfSpeechMicroseconds: Double
            var latencyMs: Double
        }

        var connected: Int
        var turns: [Turn]
        /// Seconds of audio the connected sessions streamed, together.
        var sessionSeconds: Double
        /// When the host ran the CPUs slower during the paced run.
        var hostSlowdowns: HostSlowdownProbe.Report
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

    let sessions: Int
    let turnsPerSession: Int
    let profile: ServerLoadProfile
    let topology: ServerTopology
    private var audio: TurnAudio { profile.audio }

    init(sessions: Int, turnsPerSession: Int, profile: ServerLoadProfile, topology: ServerTopology = ServerTopology()) {
        self.sessions = sessions
        self.turnsPerSession = turnsPerSession
        self.profile = profile
        self.topology = topology
    }

    func run() async throws -> Outcome {
        let tools = try await BenchmarkTools.folder()
        let logDirectory = FileManager.default.temporaryDirectory.path
        let upstream = try await ChildProcess(
            executable: ChildProcess.sibling("FakeUpstream"),
            arguments: profile.upstreamArguments,
            logPath: "\(logDirectory)/parley-bench-upstream.log"
        )
        defer { upstream.stop() }
        var servers: [ChildProcess] = []
        defer { servers.forEach { $0.stop() } }
        for node in 0..<topology.nodeCount {
            servers.append(try await ChildProcess(
                executable: URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath(),
                arguments: ["serve", "--upstream", upstream.address] + profile.serverArguments + topology.serverArguments(node: node),
                logPath: "\(logDirectory)/parley-bench-server\(node == 0 ? "" : "-\(node)").log"
            ))
        }
        let addresses = try servers.map { server in
            guard let url = URL(string: server.address), let host = url.host, let port = url.port else {
                throw ChildProcess.Failure(description: "bad server address \(server.address)")
            }
            return "\(host):\(port)"
        }
        let pids = servers.map(\.pid)
        func summed(_ figure: (Int32) -> Double?) -> Double { pids.reduce(0) { $0 + (figure($1) ?? 0) } }
        func residentBytes() -> Int { pids.reduce(0) { $0 + (ProcessFigures.residentBytes(pid: $1) ?? 0) } }

        let chunkCount = audio.count * turnsPerSession
        let messages = audio.chunks.map { #"{"type":"input_audio_buffer.append","audio":"\#(PCM16Buffer(samples: $0).base64EncodedString())"}"# }
        let baseline = residentBytes()
        let load = try await RealtimeLoadClient.connect(
            folder: tools, servers: addresses, path: topology.path, token: BenchmarkServer.defaultSecret, sessions: sessions,
            messages: messages, chunkCount: chunkCount, turnChunks: audio.count)
        try await Task.sleep(for: .milliseconds(300))
        let idle = residentBytes()

        let timeline = ResampledTimeline(chunkCount: chunkCount, outputRate: 16_000) { VoiceSessionProviders.sincResampler(from: $0, to: $1) }
        let cpuBefore = summed { ProcessFigures.cpuSeconds(pid: $0) }
        let upstreamCPUBefore = ProcessFigures.cpuSeconds(pid: upstream.pid) ?? 0
        let waitBefore = summed(ProcessFigures.runQueueWaitSeconds)
        let runStart = ContinuousClock.now
        let peak = PeakSampler(pids: pids)
        let sampling = Task { await peak.run() }
        let probe = try HostSlowdownProbe(folder: tools)
        let report = try await load.run()
        let hostSlowdowns = try await probe.stop()
        sampling.cancel()
        let cpuSeconds = summed { ProcessFigures.cpuSeconds(pid: $0) } - cpuBefore
        let upstreamCPUSeconds = (ProcessFigures.cpuSeconds(pid: upstream.pid) ?? upstreamCPUBefore) - upstreamCPUBefore
        let waitSeconds = summed(ProcessFigures.runQueueWaitSeconds) - waitBefore
        let runSeconds = max((ContinuousClock.now - runStart).milliseconds / 1000, 0.001)
        let audioSeconds = Double(load.connected * chunkCount * TurnAudio.chunkMilliseconds) / 1000
        let count = Double(max(load.connected, 1))
        return Outcome(
            connected: load.connected,
            turns: turns(report, timeline: timeline),
            sessionSeconds: audioSeconds,
            hostSlowdowns: hostSlowdowns,
            serverCPUMillisecondsPerSessionSecond: audioSeconds > 0 ? cpuSeconds * 1000 / audioSeconds : 0,
            clientCPUMillisecondsPerSessionSecond: audioSeconds > 0 ? report.cpuSeconds * 1000 / audioSeconds : 0,
            upstreamCPUMillisecondsPerSessionSecond: audioSeconds > 0 ? upstreamCPUSeconds * 1000 / audioSeconds : 0,
            idleBytesPerSession: Double(idle - baseline) / count,
            activeBytesPerSession: Double(max(peak.peak, idle) - baseline) / count,
            worstLatenessMs: report.worstLatenessMicroseconds / 1000,
            stages: Self.stages(report.turnMetricsEvents),
            serverCores: cpuSeconds / runSeconds,
            serverWaitingCores: waitSeconds / runSeconds
        )
    }

    /// Per answered turn: from sending the chunk the profile times from (the one whose arrival
    /// let the server's input reach `audio_end_ms`, or the turn's last voiced chunk) to
    /// receiving the first audio delta.
    private func turns(_ report: RealtimeLoadClient.Report, timeline: ResampledTimeline) -> [Outcome.Turn] {
        report.turns.compactMap { turn in
            guard turn.session < report.sentMicroseconds.count,
                  let endingChunk = timeline.chunkIndex(reaching: turn.audioEndMs) else { return nil }
            let chunk = switch profile.measuredFrom {
            case .turnEnd: endingChunk
            case .lastVoicedChunk: endingChunk / audio.count * audio.count + audio.lastSpeechChunk
            }
            guard chunk < report.sentMicroseconds[turn.session].count else { return nil }
            let sent = report.sentMicroseconds[turn.session][chunk]
            return Outcome.Turn(endOfSpeechMicroseconds: report.startMicroseconds + sent, latencyMs: (turn.firstAudioMicroseconds - sent) / 1000)
        }
    }

    /// The server's own stage figures, from its `parley.turn_metrics` events.
    private static func stages(_ events: [String]) -> ServerStages {
        var stages = ServerStages()
        for event in events {
            guard let metrics = try? JSONValue(parsing: event) else { continue }
            if let value = metrics["transcription_ms"]?.numberValue { stages.transcriptionMs.append(value) }
            if let value = metrics["first_token_ms"]?.numberValue { stages.firstTokenMs.append(value) }
            if let value = metrics["first_audio_ms"]?.numberValue { stages.firstAudioMs.append(value) }
        }
        return stages
    }
}

/// Samples the resident memory of processes (together) every 100 ms and keeps the peak.
///
/// `@unchecked Sendable`: `highest` is guarded by `lock`.
private final class PeakSampler: @unchecked Sendable {
    private let pids: [Int32]
    private let lock = NSLock()
    private var highest = 0

    init(pids: [Int32]) { self.pids = pids }

    /// The highest resident size seen, in bytes.
    var peak: Int { lock.withLock { highest } }

    /// Samples until cancelled.
    func run() async {
        while !Task.isCancelled {
            let bytes = pids.compactMap { ProcessFigures.residentBytes(pid: $0) }
            if bytes.count == pids.count { lock.withLock { highest = max(highest, bytes.reduce(0, +)) } }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }
}
