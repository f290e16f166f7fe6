import BenchmarkHarness
import Foundation
import ParleyCore

/// The server under load (issues 7 and 23), in two profiles (`ServerLoadProfile`): the
/// defaults a user gets (Silero VAD, real synthesised speech, an upstream as slow as a hosted
/// stack), timed from the chunk holding the last voiced sample of each question to the first
/// audio delta, with the p99 limit of `DefaultsLatencyBound`; and the pipeline overhead (energy VAD, an upstream that
/// answers at once, synthetic speech), timed from the chunk that ended the turn (whose arrival
/// let the server's input reach `speech_stopped.audio_end_ms`), with a 20 ms p99 limit. Each
/// profile's capacity is searched (`CapacitySearch`): the largest count that held and the
/// smallest that failed.
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
        results += try await measure(profile, turns: quick ? 2 : 4, quick: quick)
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

/// One trial of the defaults profile at a fixed count (`PARLEY_BENCH_SESSIONS`, 100 when
/// unset) with its full figures: for comparing two builds' servers at the same load, where a
/// capacity search's trials would differ between them.
func runServerTrialBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    let setting = ProcessInfo.processInfo.environment["PARLEY_BENCH_SESSIONS"] ?? "100"
    guard let sessions = Int(setting), (1...2_000).contains(sessions) else {
        throw BenchmarkToolError("PARLEY_BENCH_SESSIONS must be a count from 1 to 2000, not '\(setting)'")
    }
    let profile = try await ServerLoadProfile.defaults(quick: quick)
    let turns = quick ? 2 : 4
    let trial = ServerTrial(
        outcome: try await ServerLoad(sessions: sessions, turnsPerSession: turns, profile: profile).run(),
        sessions: sessions, turns: turns, p99LimitMs: profile.p99LimitMs)
    return figures(of: trial, profile: profile, atLargestHeld: trial.held)
}

/// The profile's capacity, found by the search every capacity figure uses (`CapacitySearch`,
/// each trial on fresh processes warmed up by one unmeasured turn per node), with a line for
/// every trial and the full figures of the trials at the largest count that held and the
/// smallest that failed.
private func measure(_ profile: ServerLoadProfile, turns: Int, quick: Bool) async throws -> [BenchmarkResult] {
    let search = CapacitySearch(ladder: profile.sessionCounts, ceiling: profile.ceiling, precision: quick ? 0.5 : 0.1)
    let bracket = try await search.run(
        trial: { sessions in
            ServerTrial(
                outcome: try await ServerLoad(sessions: sessions, turnsPerSession: turns, profile: profile).run(),
                sessions: sessions, turns: turns, p99LimitMs: profile.p99LimitMs)
        },
        holds: \.held
    )
    var results = bracket.runs.enumerated().map { index, run in
        serverResult(
            "\(profile.name): trial \(index + 1), \(run.count) sessions: \(profile.latencyName), p99 / turns answered of \(run.count * turns)",
            run.figures.p99, "ms", "", nil,
            detail: Double(run.figures.latencies.count), detailUnit: run.held ? "answered (held)" : "answered (failed)")
    }
    if let held = bracket.held { results += figures(of: held.figures, profile: profile, atLargestHeld: true) }
    if let failed = bracket.failed { results += figures(of: failed.figures, profile: profile, atLargestHeld: false) }
    let held = bracket.held?.count ?? 0
    results.append(.capacity(
        area: "server", name: "\(profile.name): concurrent sessions (every turn answered, \(profile.p99LimitText), timed \(profile.latencyName))",
        bracket: bracket, noun: "sessions",
        target: profile.capacityTarget.map { ">= \($0) held" } ?? "", meetsTarget: profile.capacityTarget.map { held >= $0 }))
    return results
}

/// One trial of the server's capacity search.
private struct ServerTrial {
    var outcome: ServerLoad.Outcome
    var sessions: Int
    var turns: Int
    var latencies: [Double]
    var p99: Double
    /// Every session connected, every turn was answered, and the p99 is within the profile's limit.
    var held: Bool

    init(outcome: ServerLoad.Outcome, sessions: Int, turns: Int, p99LimitMs: Double) {
        self.outcome = outcome
        self.sessions = sessions
        self.turns = turns
        latencies = outcome.turns.map(\.latencyMs)
        p99 = percentile(latencies, 99)
        held = outcome.connected == sessions && latencies.count == sessions * turns && p99 <= p99LimitMs
    }
}

/// The full figures of one trial: latency, the host's slow stretches, CPU, memory, the server's stages.
private func figures(of trial: ServerTrial, profile: ServerLoadProfile, atLargestHeld: Bool) -> [BenchmarkResult] {
    let outcome = trial.outcome
    let sessions = trial.sessions
    let latencies = trial.latencies
    let awayFromSlowStretches = outcome.turns.filter {
        !outcome.hostSlowdowns.isNearSlowStretch($0.endOfSpeechMicroseconds, before: 20_000, after: 100_000)
    }.map(\.latencyMs)
    let label = "\(profile.name), \(sessions) sessions (\(atLargestHeld ? "the largest count held" : "the smallest count failed"))"
    let latency = "\(profile.name): \(profile.latencyName), \(sessions) sessions"
    var results = [
        serverResult("\(latency), p50", percentile(latencies, 50), "ms", "", nil),
        serverResult("\(latency), p99", trial.p99, "ms", "", nil),
        serverResult(
            "host slow stretches during the run, \(label): share of the time / worst slowdown", outcome.hostSlowdowns.slowPercent, "%", "", nil,
            detail: outcome.hostSlowdowns.worstRatio, detailUnit: "times slower"),
        serverResult(
            "\(latency), p99 of the turns away from host slow stretches / share of turns",
            percentile(awayFromSlowStretches, 99), "ms", "", nil,
            detail: latencies.isEmpty ? 0 : Double(awayFromSlowStretches.count) * 100 / Double(latencies.count), detailUnit: "% of turns"),
        serverResult("turns answered, \(label)", Double(latencies.count), "of \(sessions * trial.turns)", "", nil),
        serverResult("server CPU per session-second, \(label)", outcome.serverCPUMillisecondsPerSessionSecond, "ms/s", "", nil),
        serverResult("load client / fake upstream CPU per session-second, \(label)", outcome.clientCPUMillisecondsPerSessionSecond, "ms/s", "", nil, detail: outcome.upstreamCPUMillisecondsPerSessionSecond, detailUnit: "ms/s upstream"),
        serverResult("server CPU used / waited for (run queue), \(label)", outcome.serverCores, "cores", "", nil, detail: outcome.serverWaitingCores, detailUnit: "cores waiting"),
        serverResult(
            "server memory per idle session, \(label)", outcome.idleBytesPerSession / 1024, "KiB",
            atLargestHeld ? "<= 1024 KiB" : "", atLargestHeld ? outcome.idleBytesPerSession <= 1_048_576 : nil),
        serverResult("server memory per active session, \(label)", outcome.activeBytesPerSession / 1024, "KiB", "", nil),
    ]
    for (stage, values) in outcome.stages.named {
        results.append(serverResult(
            "server-side commit -> \(stage) (0 when ready before the commit), \(label), p50 / p99", percentile(values, 50), "ms", "", nil,
            detail: percentile(values, 99)))
    }
    results.append(serverResult("client send lateness (max), \(label)", outcome.worstLatenessMs, "ms", "", nil))
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

/// One load run against fresh server processes, after one unmeasured warm-up turn on each.
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
        // The warm-up: one unmeasured turn on every node, so no measured turn pays for a first start.
        _ = try await RealtimeLoadClient.connect(
            folder: tools, servers: addresses, path: "/v1/realtime", token: BenchmarkServer.defaultSecret, sessions: addresses.count,
            messages: messages, chunkCount: audio.count, turnChunks: audio.count
        ).run()
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
