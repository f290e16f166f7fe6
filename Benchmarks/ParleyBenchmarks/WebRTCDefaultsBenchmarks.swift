import BenchmarkHarness
import Foundation
import ParleyCore
import ParleyServer

/// How many WebRTC calls one server holds on 2 cores with the defaults a user gets: Silero VAD,
/// server_vad with its 300 ms silence window, preemption on, and the upstream of the server's
/// defaults profile (`DefaultsUpstream`), held to `DefaultsLatencyBound`. Every call asks the flite
/// question (`DefaultsQuestion`, 48 kHz Opus) and is timed from the frame holding its last voiced
/// sample to the first packet of the answer. Two unmeasured turns on one call warm the server up
/// and time the reply, from which the turn period follows (`turnPeriod`); the search is
/// `WebRTCCapacitySearch`'s, its counts those of the phone doors' (`PhoneCapacityBenchmarks`).
enum WebRTCDefaultsBenchmarks {
    /// Margin in the turn period for a reply that plays out slower under load than on one call.
    static let periodMarginSeconds = 1.0

    /// The search and its result rows, in the `webrtc` area.
    static func measure(quick: Bool) async throws -> [BenchmarkResult] {
        let search = quick
            ? CapacitySearch(ladder: [1, 10], ceiling: 40, precision: 0.5)
            : CapacitySearch(ladder: [10, 50, 100], ceiling: 800)
        let upstream = try await DefaultsUpstream(benchmark: "webrtc")
        defer { upstream.stop() }
        let (wav, questionSeconds) = try await questionWAV()
        defer { try? FileManager.default.removeItem(at: wav) }
        var settings = ServerSettings()
        settings.port = 0
        settings.maximumSessions = 10_000
        settings.dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-bench-webrtc-defaults-\(getpid())")
        defer { try? FileManager.default.removeItem(at: settings.dataDirectory) }
        let app = try ParleyApp(settings: settings, secret: BenchmarkServer.defaultSecret, providers: upstream.providers, log: .silent)
        try app.start()
        let outcome: WebRTCCapacitySearch.Outcome
        let capacitySearch: WebRTCCapacitySearch
        do {
            let url = "http://127.0.0.1:\(app.port)/v1/realtime/calls"
            let replySeconds = try await warmUp(url: url, wav: wav)
            let period = turnPeriod(questionSeconds: questionSeconds, replySeconds: replySeconds)
            // A call's first turn starts within one period, and a turn whose question would not
            // end within the trial is not asked: every call asks at least once.
            capacitySearch = WebRTCCapacitySearch(
                url: url, token: BenchmarkServer.defaultSecret, processes: 2, seconds: max(quick ? 12 : 30, period + questionSeconds),
                turnPeriod: period, question: wav,
                voiceToVoiceP99Bound: (Double(DefaultsLatencyBound.defaults.milliseconds), DefaultsLatencyBound.defaults.text)
            )
            outcome = try await capacitySearch.run(search)
        } catch {
            await app.shutdown()
            throw error
        }
        await app.shutdown()
        return rows(outcome, search: capacitySearch)
    }

    /// Seconds from one turn's start to the next: the question, the latest a held answer may begin
    /// (the p99 bound, `DefaultsLatencyBound`), the reply as it played on one call, and
    /// `periodMarginSeconds`, rounded up to half a second. A caller who spoke again sooner would
    /// talk over the agent, and the server's interruption policy would change what is measured.
    static func turnPeriod(questionSeconds: Double, replySeconds: Double) -> Double {
        let needed = questionSeconds + Double(DefaultsLatencyBound.defaults.milliseconds) / 1000 + replySeconds + periodMarginSeconds
        return (needed * 2).rounded(.up) / 2
    }

    /// Two turns on one call, not measured: the server's first turns (Silero's first inference,
    /// the upstream's first connections) are paid here. Returns the longer reply's seconds.
    private static func warmUp(url: String, wav: URL) async throws -> Double {
        let lines = try await WebRTCBenchClient.run(
            ["latency", "--url", url, "--token", BenchmarkServer.defaultSecret, "--speech-wav", wav.path, "--turns", "2"]
        )
        let replies = lines.compactMap { $0.hasPrefix("reply ") ? Double($0.dropFirst(6)) : nil }
        guard replies.count == 2, let longest = replies.max() else {
            throw WebRTCBenchClient.Failure(description: "warm-up: \(lines.joined(separator: "\n"))")
        }
        print("  webrtc defaults warm-up: \(lines.joined(separator: ", "))")
        return longest / 1000
    }

    /// The question at 48 kHz up to its last voiced sample, in a WAV for the load peers, and its seconds.
    private static func questionWAV() async throws -> (URL, Double) {
        let (speech, rate) = try await DefaultsQuestion.spoken()
        var resampler = BenchmarkServer.resampler(from: rate, to: 48_000)
        let wide = SampleConversion.pcm16(resampler.process(speech) + resampler.flush())
        guard let last = EndOfSpeech.lastVoicedSample(in: wide) else { throw EmbeddedBenchmarkFailure("the spoken question has no voiced sample") }
        let question = Array(wide[...last])
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("parley-bench-webrtc-question-\(getpid()).wav")
        try WAVFile.pcm16Data(samples: question, format: AudioFormat(sampleRate: 48_000, channelCount: 1)).write(to: file)
        return (file, Double(question.count) / 48_000)
    }

    /// Each trial's p99 and turns answered, the p50 at the largest count held, the calls held,
    /// and what a held call costs.
    private static func rows(_ outcome: WebRTCCapacitySearch.Outcome, search: WebRTCCapacitySearch) -> [BenchmarkResult] {
        let figure = { (name: String, value: Double, unit: String) in
            BenchmarkResult(area: "webrtc", name: name, value: value, unit: unit, target: "", meetsTarget: nil)
        }
        let timed = "last voiced frame sent → first answer packet received"
        var results = outcome.bracket.runs.enumerated().map { index, run in
            figure(
                "WebRTC calls with the defaults, trial \(index + 1), \(run.count) concurrent: \(timed) (p99) / turns answered",
                run.figures.voiceToVoiceMs.isEmpty ? 0 : percentile(run.figures.voiceToVoiceMs, 99),
                "ms / \(run.figures.answered) of \(run.figures.turns) answered (\(run.held ? "held" : "failed: \(run.figures.failure ?? "")"))"
            )
        }
        let failedNext = outcome.failed.map { "\($0.calls) calls failed: \($0.failure ?? "")" } ?? "no count tried failed"
        results.append(.capacity(
            area: "webrtc",
            name: "concurrent calls, \(DefaultsUpstream.label), server and \(search.peers), \(search.rule) (\(failedNext); bound: \(outcome.bound))",
            bracket: outcome.bracket, noun: "calls"))
        results.append(figure(
            "WebRTC calls with the defaults, server memory per call, first trial of the search (\(outcome.first.calls) calls; resident, connected − before)",
            outcome.first.residentBytesPerCall / 1_048_576, "MiB"))
        guard let held = outcome.held else { return results }
        let largest = "\(held.calls) concurrent (the largest count held)"
        results += [
            figure("WebRTC calls with the defaults, \(largest): \(timed) (p50)", percentile(held.voiceToVoiceMs, 50), "ms"),
            figure("WebRTC calls with the defaults, \(largest): server CPU per call (Opus, SRTP, Silero VAD, session, upstream clients)",
                   held.serverCPUPerCall * 100, "% of a core"),
            figure("WebRTC calls with the defaults, \(largest): the longest pause between two talkspurts of one answer (the server had no audio to send)",
                   held.longestPauseMs, "ms"),
        ]
        return results
    }
}
