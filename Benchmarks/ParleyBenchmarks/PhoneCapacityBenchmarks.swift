import BenchmarkHarness
import Foundation
import ParleyNet
import ParleyServer
import ParleySIP

/// How many phone calls one server holds on 2 cores with the defaults a user gets, on either
/// phone door: Silero VAD, server_vad with its 300 ms silence window, preemption on, and the
/// upstream of the server's defaults profile (`DefaultsUpstream`). Every call asks the
/// same flite question (`DefaultsQuestion`) as 8 kHz G.711, paced 20 ms a packet. Searched by
/// the rule every capacity figure uses (`CapacitySearch`): a trial places one unmeasured warm-up
/// call, then its calls, started within one second; it holds when every call is answered and the
/// p99 from the caller's last voiced sample to the agent's first audio back is within
/// `DefaultsLatencyBound`. The
/// callers run in the server's process (a SIP endpoint of our own, or the simulated Twilio), so
/// they take some of the same two cores.
enum PhoneCapacityBenchmarks {
    enum Door: String { case sip = "SIP", twilio = "Twilio" }

    /// The search and its result rows, in `area`.
    static func measure(door: Door, area: String, quick: Bool) async throws -> [BenchmarkResult] {
        let search = quick
            ? CapacitySearch(ladder: [1, 10], ceiling: 40, precision: 0.5)
            : CapacitySearch(ladder: [10, 50, 100], ceiling: 800)
        let upstream = try await DefaultsUpstream(benchmark: "phone")
        defer { upstream.stop() }
        var settings = ServerSettings()
        settings.port = 0
        settings.maximumSessions = 10_000
        // Every call here comes from one number, which the server otherwise holds to 10 calls at once.
        settings.maximumSessionsPerUser = 10_000
        settings.sip.port = 0
        settings.sip.trunks = [try IPAddressRange("127.0.0.1")]
        // A trial starts all its calls within one second from one address; the INVITE flood guard
        // (20 a second, bursts of 40, per address) would otherwise be the limit found, as a busy
        // trunk's operator raises it with PARLEY_SIP_INVITES_PER_SECOND.
        settings.sip.invitesPerSecond = 10_000
        settings.telephony.twilioAuthToken = telephonyBenchmarkAuthToken
        settings.dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-bench-phone-capacity-\(getpid())")
        defer { try? FileManager.default.removeItem(at: settings.dataDirectory) }
        let app = try ParleyApp(settings: settings, secret: BenchmarkServer.defaultSecret, providers: upstream.providers, log: .silent)
        try app.start()
        let question = try await spokenQuestion()
        var callerSettings = SIPEndpoint.Settings()
        callerSettings.port = 0
        callerSettings.rtpPorts = 30_000...40_000
        let caller = try SIPEndpoint(settings: callerSettings) { _ in }
        defer { caller.close() }
        let call: @Sendable () async throws -> Duration
        switch door {
        case .sip:
            guard let sipPort = app.sipPort else { throw EmbeddedBenchmarkFailure("the SIP door did not open") }
            let target = "sip:+14155550123@127.0.0.1:\(sipPort)"
            let spoken = [Int16](repeating: 0, count: 400 * 8) + question
            call = { try await mouthToEar(caller: caller, target: target, question: spoken, deadline: .seconds(10)).anySound }
        case .twilio:
            let port = app.port
            let script = CallScript(leadInMs: 400, speech: question)
            call = { try await placeCall(port: port, script: script, deadline: .seconds(10)) }
        }
        let bound = DefaultsLatencyBound.defaults
        let bracket = await concurrentCallsSearch(search, p99LimitMs: Double(bound.milliseconds), call: call)
        await app.shutdown()
        let what = "\(door.rawValue) concurrent calls, \(DefaultsUpstream.label)"
        var results = bracket.runs.enumerated().map { index, run in
            BenchmarkResult(
                area: area,
                name: "\(door.rawValue) calls with the defaults, trial \(index + 1), \(run.count) concurrent: caller's last voiced sample → first agent audio (p99) / calls answered",
                value: run.figures.p99, unit: "ms / \(run.figures.latencies.count) answered (\(run.held ? "held" : "failed"))",
                target: "", meetsTarget: nil)
        }
        if let held = bracket.held?.figures {
            results.append(BenchmarkResult(
                area: area,
                name: "\(door.rawValue) calls with the defaults, \(held.calls) concurrent (the largest count held): caller's last voiced sample → first agent audio (p50)",
                value: percentile(held.latencies, 50), unit: "ms", target: "", meetsTarget: nil))
        }
        results.append(.capacity(area: area, name: what + ": every call answered, \(bound.text)", bracket: bracket, noun: "calls"))
        return results
    }

    /// The question (`DefaultsQuestion`) as a phone delivers it (8 kHz), ending on its last voiced sample.
    private static func spokenQuestion() async throws -> [Int16] {
        let (speech, rate) = try await DefaultsQuestion.spoken()
        let narrow = try TelephoneAudio.narrowband(speech, rate: rate)
        let last = EndOfSpeech.lastVoicedSample(in: narrow) ?? narrow.count - 1
        return Array(narrow[...last])
    }
}
