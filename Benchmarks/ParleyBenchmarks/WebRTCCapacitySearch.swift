import BenchmarkHarness
import Foundation

/// How many WebRTC calls the server holds on this machine: trials of N concurrent calls
/// (`Benchmarks/webrtc_bench_client.py capacity`), each speaking once every `turnPeriod`
/// seconds, searched by the rule every capacity figure uses (`CapacitySearch`): the largest count
/// that held and the smallest that failed. The server is warmed up before the search (by the
/// caller, with single calls) and every trial is timed from the moment all its calls connected.
///
/// A trial passes when every call connected, every turn was answered, the agent talked over no
/// turn (its answer audio arrived while the caller spoke), no answer packet was lost or arrived
/// more than `longestGapMs` after the one before it inside a talkspurt (a 20 ms frame plus a
/// 60 ms jitter buffer), and the p99 voice-to-voice time is within `voiceToVoiceP99Bound`.
/// A pause between two talkspurts of one answer (the server had no audio queued, say the next
/// sentence's synthesis was not in yet, and sent nothing) is heard as a longer pause between the
/// agent's words, not as a glitch: it is reported (`Trial.longestPauseMs`), not judged.
/// The server runs in this process; the load peers share the machine's two cores with it.
struct WebRTCCapacitySearch {
    /// Gaps inside an answer's talkspurt beyond this would empty a 60 ms jitter buffer.
    static let longestGapMs = 80.0
    /// A load peer whose own loop sent a frame later than this was itself the limit.
    static let peerLagBoundMs = 60.0

    let url: String
    let token: String
    let processes: Int
    let seconds: Double
    /// Seconds from one of a call's turns to its next: room for the question and the whole reply.
    let turnPeriod: Double
    /// The spoken question's WAV (48 kHz mono 16-bit); `nil`: 1 s of a 220 Hz tone.
    let question: URL?
    /// The most the p99 voice-to-voice time may be, and how figure names say it.
    let voiceToVoiceP99Bound: (milliseconds: Double, text: String)

    /// One trial's figures: the load peers' report and the server's own use while the calls ran.
    struct Trial {
        var calls: Int
        var failure: String?
        var turns: Int
        var answered: Int
        var voiceToVoiceMs: [Double]
        /// The longest pause between two talkspurts of one answer.
        var longestPauseMs: Double
        var peerLagMs: Double
        var serverCPUPerCall: Double
        var loopThreadCPUPerCall: Double
        var peerCPUPerCall: Double
        /// Of both cores, 0…1.
        var machineBusy: Double
        var residentBytesPerCall: Double
        var threadsAdded: Int

        var passed: Bool { failure == nil }
    }

    /// The search's outcome: the trials at the largest count that held and the smallest that failed.
    struct Outcome {
        var bracket: CapacityBracket<Trial>
        var held: Trial? { bracket.held?.figures }
        var failed: Trial? { bracket.failed?.figures }
        /// The search's first trial: its memory per call is measured on a heap no larger trial grew.
        var first: Trial

        /// What stopped the next count: the load peers, the two shared cores, or the server.
        var bound: String {
            guard let failed else { return "none found up to the ceiling" }
            if failed.peerLagMs > WebRTCCapacitySearch.peerLagBoundMs { return "the load peers (their own loops fell behind)" }
            if failed.machineBusy > 0.9 { return "the two cores, shared by the server and the load peers" }
            return "the server"
        }
    }

    /// Who calls, for figure names.
    var peers: String {
        "light aiortc load peers in \(processes) Python processes on the same 2 cores (Opus encoded once, nothing decoded)"
    }

    /// The trial's load and pass rule, for figure names.
    var rule: String {
        let speech = question == nil ? "speaking 1 s of tone" : "asking the question"
        return "each \(speech) once every \(String(format: "%g", turnPeriod)) s; held: every turn answered and none talked over by the agent, "
            + "no answer packet lost or over \(Int(Self.longestGapMs)) ms after the one before inside a talkspurt, "
            + "voice-to-voice \(voiceToVoiceP99Bound.text)"
    }

    /// Runs `search`, each count it tries a trial of that many calls.
    func run(_ search: CapacitySearch) async throws -> Outcome {
        let bracket = try await search.run(
            trial: { calls in
                let trial = try await self.trial(calls: calls)
                print("  webrtc capacity trial: \(calls) calls → \(trial.failure ?? "held")")
                return trial
            },
            holds: \.passed
        )
        guard let first = bracket.runs.first?.figures else { throw WebRTCBenchClient.Failure(description: "the search ran no trial") }
        return Outcome(bracket: bracket, first: first)
    }

    private func trial(calls: Int) async throws -> Trial {
        let threadsBefore = Self.threadCount()
        let residentBefore = ProcessFigures.residentBytes(pid: getpid()) ?? 0
        let atConnected = Snapshot()
        let atHeld = Snapshot()
        let speech = question.map { ["--speech-wav", $0.path] } ?? []
        let lines = try await WebRTCBenchClient.run(
            ["capacity", "--url", url, "--token", token, "--calls", "\(calls)", "--processes", "\(processes)", "--seconds", "\(seconds)",
             "--turn-period", "\(turnPeriod)"] + speech,
            onLine: { line in
                if line.hasPrefix("connected") { atConnected.take() }
                if line == "held" { atHeld.take() }
            }
        )
        guard let resultLine = lines.first(where: { $0.hasPrefix("result ") }),
              let report = try JSONSerialization.jsonObject(with: Data(resultLine.dropFirst(7).utf8)) as? [String: Any] else {
            throw WebRTCBenchClient.Failure(description: "capacity trial of \(calls): \(lines.joined(separator: "\n"))")
        }
        let start = atConnected.figures, end = atHeld.figures
        let held = end.wall - start.wall
        let wall = Double(held.components.seconds) + Double(held.components.attoseconds) / 1e18
        let connected = report["calls"] as? Int ?? 0
        let turns = report["turns"] as? Int ?? 0, answered = report["answered"] as? Int ?? 0
        let lost = report["lost_packets"] as? Int ?? 0
        let talkedOver = report["talked_over"] as? Int ?? 0
        let longestGap = report["longest_gap_ms"] as? Double ?? 0
        let voiceToVoice = report["voice_to_voice_ms"] as? [Double] ?? []
        let errors = report["errors"] as? [String] ?? []
        let p99 = voiceToVoice.isEmpty ? .infinity : percentile(voiceToVoice, 99)
        var failure: String?
        if connected < calls || !errors.isEmpty {
            failure = "\(calls - connected) of \(calls) calls did not connect \(errors.prefix(1))"
        } else if turns < calls || answered < turns {
            failure = "\(turns - answered) of \(turns) turns unanswered"
        } else if talkedOver > 0 {
            failure = "the agent talked over \(talkedOver) of \(turns) turns"
        } else if lost > 0 {
            failure = "\(lost) answer packets lost"
        } else if longestGap > Self.longestGapMs {
            failure = String(format: "a gap of %.0f ms inside an answer's talkspurt", longestGap)
        } else if p99 > voiceToVoiceP99Bound.milliseconds {
            failure = String(format: "voice-to-voice p99 %.0f ms", p99)
        }
        let perCall = { (seconds: Double) in seconds / wall / Double(max(calls, 1)) }
        return Trial(
            calls: calls, failure: failure, turns: turns, answered: answered, voiceToVoiceMs: voiceToVoice,
            longestPauseMs: report["longest_pause_ms"] as? Double ?? 0, peerLagMs: report["peer_lag_ms"] as? Double ?? 0,
            serverCPUPerCall: perCall(end.cpu - start.cpu), loopThreadCPUPerCall: perCall(end.loopThreadCPU - start.loopThreadCPU),
            peerCPUPerCall: (report["peer_cpu_seconds"] as? Double ?? 0) / wall / Double(max(calls, 1)),
            machineBusy: (end.machineBusy - start.machineBusy) / wall / 2,
            residentBytesPerCall: Double(start.resident - residentBefore) / Double(max(calls, 1)),
            threadsAdded: start.threads - threadsBefore
        )
    }

    static func threadCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
    }

    /// CPU seconds of the server's WebRTC loop thread (named `parley-rtc`), 0 before it exists.
    static func loopThreadCPUSeconds() -> Double {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        for task in tasks {
            guard let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
                  name.trimmingCharacters(in: .whitespacesAndNewlines) == "parley-rtc",
                  let seconds = ProcessFigures.cpuSeconds(statFile: "/proc/self/task/\(task)/stat") else { continue }
            return seconds
        }
        return 0
    }
}

/// The server's figures at one moment of a trial.
///
/// `@unchecked Sendable`: `taken` is guarded by `lock`.
private final class Snapshot: @unchecked Sendable {
    struct Figures {
        var cpu = 0.0, loopThreadCPU = 0.0, machineBusy = 0.0, wall = ContinuousClock.now, resident = 0, threads = 0
    }

    private let lock = NSLock()
    private var taken = Figures()

    func take() {
        let figures = Figures(
            cpu: ProcessFigures.ownCPUSeconds(), loopThreadCPU: WebRTCCapacitySearch.loopThreadCPUSeconds(),
            machineBusy: ProcessFigures.machineBusyCPUSeconds() ?? 0, wall: .now,
            resident: ProcessFigures.residentBytes(pid: getpid()) ?? 0, threads: WebRTCCapacitySearch.threadCount()
        )
        lock.withLock { taken = figures }
    }

    var figures: Figures { lock.withLock { taken } }
}
