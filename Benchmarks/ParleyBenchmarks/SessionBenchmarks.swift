import BenchmarkHarness
import Foundation
import ParleyCore

/// The voice session pipeline's own overhead (issue 6): with zero-latency providers, the time
/// from the audio chunk that ends the user's turn going in to the first chunk of the reply's
/// audio coming out, for 1 and for 200 concurrent sessions fed real-time paced audio in 20 ms
/// chunks at 24 kHz (resampled, energy VAD, turn detector, agent, segmenter, synthesizer);
/// and the CPU it costs per session-second of audio.
func runSessionBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    var results: [BenchmarkResult] = []
    for sessions in [1, 200] {
        let turns = quick ? (sessions == 1 ? 15 : 3) : (sessions == 1 ? 60 : 10)
        let outcome = await SessionLoad(sessions: sessions, turnsPerSession: turns).run()
        let label = sessions == 1 ? "1 session" : "\(sessions) sessions"
        let p50 = percentile(outcome.latenciesMs, 50)
        let p99 = percentile(outcome.latenciesMs, 99)
        let atTarget = sessions == 200
        // Instant providers and preemption: the reply is ready inside the silence window, so this
        // times the release of a reply already made, the pipeline's own overhead.
        let latency = "pipeline overhead (instant providers, energy VAD, preemption on): chunk ending the turn in -> first audio chunk out, \(label)"
        results.append(sessionResult("\(latency), p50", p50, "ms", atTarget ? "<= 2 ms" : "", atTarget ? p50 <= 2 : nil))
        results.append(sessionResult("\(latency), p99", p99, "ms", atTarget ? "<= 10 ms" : "", atTarget ? p99 <= 10 : nil))
        let expected = sessions * turns
        results.append(sessionResult(
            "turns answered, \(label)", Double(outcome.latenciesMs.count), "of \(expected)", "all", outcome.latenciesMs.count == expected
        ))
        results.append(sessionResult("CPU per session-second of audio, \(label)", outcome.cpuMillisecondsPerSessionSecond, "ms/s", "", nil))
        results.append(sessionResult("driver lateness (max), \(label)", outcome.worstLatenessMs, "ms", "", nil))
    }
    return results
}

private func sessionResult(_ name: String, _ value: Double, _ unit: String, _ target: String, _ meets: Bool?) -> BenchmarkResult {
    BenchmarkResult(area: "session", name: name, value: value, unit: unit, target: target, meetsTarget: meets)
}

/// N voice sessions in one process, each fed the same turn over and over in real time, their
/// starts spread over one turn so their turns end at different moments, and their chunks
/// spread over each 20 ms tick.
private struct SessionLoad {
    /// What one run measured.
    struct Outcome {
        var latenciesMs: [Double]
        var cpuMillisecondsPerSessionSecond: Double
        var worstLatenessMs: Double
    }

    let sessions: Int
    let turnsPerSession: Int
    private let audio = TurnAudio()

    init(sessions: Int, turnsPerSession: Int) {
        self.sessions = sessions
        self.turnsPerSession = turnsPerSession
    }

    func run() async -> Outcome {
        let providers = InstantProviders.make()
        let chunkCount = audio.count * turnsPerSession
        let timeline = ResampledTimeline(chunkCount: chunkCount, outputRate: providers.recognizer.sampleRate, makeResampler: providers.makeInputResampler)
        let configuration = VoiceSessionConfiguration(
            turnDetection: ServerVADSettings(silenceDurationMs: 300), partialTranscriptIntervalMs: 0
        )
        let feeds = (0..<sessions).map { index in
            SessionFeed(
                session: VoiceSession(providers: providers, configuration: configuration),
                sendTimes: SendTimes(count: chunkCount),
                firstTick: sessions == 1 ? 0 : index * audio.count / sessions,
                // Independent clients are not in step: each session sends at its own phase of the tick.
                phase: .microseconds(index * TurnAudio.chunkMilliseconds * 1_000 / sessions)
            )
        }
        let start = ContinuousClock.now + .milliseconds(200)
        let cpuBefore = ProcessFigures.ownCPUSeconds()
        let (latencies, worstLateness) = await withTaskGroup(of: [Double].self) { group in
            for feed in feeds {
                group.addTask { await Self.measure(feed.session.events, sendTimes: feed.sendTimes, timeline: timeline) }
            }
            let lateness = await feedAudio(feeds, chunkCount: chunkCount, start: start)
            return (await group.reduce(into: []) { $0 += $1 }, lateness)
        }
        let cpuSeconds = ProcessFigures.ownCPUSeconds() - cpuBefore
        let audioSeconds = Double(sessions * chunkCount * TurnAudio.chunkMilliseconds) / 1000
        return Outcome(
            latenciesMs: latencies,
            cpuMillisecondsPerSessionSecond: cpuSeconds * 1000 / audioSeconds,
            worstLatenessMs: worstLateness.milliseconds
        )
    }

    /// One session with where its send instants go, the tick of its first chunk and its phase
    /// within every tick.
    private struct SessionFeed: Sendable {
        var session: VoiceSession
        var sendTimes: SendTimes
        var firstTick: Int
        var phase: Duration
    }

    /// Feeds every session its chunks at their real-time instants from one task (`feeds` in
    /// phase order): it sleeps until the next instant due, then hands each session whose
    /// instant has come its chunk; each session is closed after its last chunk. Returns the
    /// worst lateness.
    private func feedAudio(_ feeds: [SessionFeed], chunkCount: Int, start: ContinuousClock.Instant) async -> Duration {
        let tick = Duration.milliseconds(TurnAudio.chunkMilliseconds)
        let ticks = (feeds.map(\.firstTick).max() ?? 0) + chunkCount
        var worst = Duration.zero
        for tickIndex in 0..<ticks {
            let tickStart = start + tick * tickIndex
            for feed in feeds {
                let chunk = tickIndex - feed.firstTick
                guard chunk >= 0, chunk < chunkCount else { continue }
                let deadline = tickStart + feed.phase
                if deadline > .now { try? await Task.sleep(until: deadline, clock: .continuous) }
                let now = ContinuousClock.now
                worst = max(worst, now - deadline)
                feed.sendTimes.record(chunk, at: now)
                try? await feed.session.appendAudio(audio.chunks[chunk % audio.count], sampleRate: TurnAudio.sampleRate)
                if chunk == chunkCount - 1 { await feed.session.close() }
            }
        }
        return worst
    }

    /// For each turn: the chunk whose arrival ended it (from the turn detector's `audio_end_ms`)
    /// to the first audio of the reply.
    private static func measure(_ events: AsyncStream<VoiceSessionEvent>, sendTimes: SendTimes, timeline: ResampledTimeline) async -> [Double] {
        var latencies: [Double] = []
        var endingChunk: Int?
        for await event in events {
            switch event {
            case .speechStopped(_, let audioEndMs):
                endingChunk = timeline.chunkIndex(reaching: audioEndMs)
            case .agentAudio:
                guard let chunk = endingChunk, let sent = sendTimes[chunk] else { continue }
                latencies.append((ContinuousClock.now - sent).milliseconds)
                endingChunk = nil
            default:
                continue
            }
        }
        return latencies
    }
}

/// When each chunk of a session was handed to it.
///
/// `@unchecked Sendable`: `times` is guarded by `lock`.
final class SendTimes: @unchecked Sendable {
    private let lock = NSLock()
    private var times: [ContinuousClock.Instant?]

    init(count: Int) { times = Array(repeating: nil, count: count) }

    /// Records that chunk `index` was sent at `instant`.
    func record(_ index: Int, at instant: ContinuousClock.Instant) { lock.withLock { times[index] = instant } }

    /// When chunk `index` was sent, if it was.
    subscript(index: Int) -> ContinuousClock.Instant? {
        lock.withLock { times.indices.contains(index) ? times[index] : nil }
    }
}
