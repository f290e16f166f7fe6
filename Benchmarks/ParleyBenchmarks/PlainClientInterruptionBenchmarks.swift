import BenchmarkHarness
import Foundation
import ParleyCore
import ParleyNet
import ParleyServer
import ParleySync

/// Interruptions as a plain client feels them (issue 38): a realtime WebSocket client that
/// plays the agent's audio as it arrives and stops only at `input_audio_buffer.speech_started`,
/// as openai-agents, Pipecat and LiveKit do. On the embedded defaults, the agent is asked for a
/// long answer; 1.5 s into its speech the user says a meant interruption (flite), and the
/// figure is from the interruption's first voiced chunk sent to the moment the listener stops
/// hearing the agent (its playback stopped at `speech_started`, or its buffer ran dry because
/// the server held the speech). Run with the default lead (`PARLEY_WEBSOCKET_AUDIO_LEAD_MS`,
/// 200 ms) and, for comparison, unpaced (0: speech sent as fast as it is made).
func runPlainClientInterruptionBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    let question = try ConversationQuestion(text: "Tell me a long story about a lighthouse keeper and his dog.", voice: "slt")
    let meant = ["Wait, stop.", "Hold on, that is not what I asked.", "Stop, I have another question."]
    let interruptions = try meant.flatMap { text in try ["slt", "rms"].map { try ConversationQuestion(text: text, voice: $0) } }
    let trials = quick ? Array(interruptions.prefix(2)) : interruptions
    var results: [BenchmarkResult] = []
    for leadMs in [ServerSettings().webSocketAudioLeadMs, 0] {
        var settings = ServerSettings.load(environment: ProcessInfo.processInfo.environment).0
        settings.port = 0
        settings.webSocketAudioLeadMs = leadMs
        settings.dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-bench-plain-client-\(getpid())")
        defer { try? FileManager.default.removeItem(at: settings.dataDirectory) }
        let providers = try await ProviderFactory.make(settings)
        let secret = "parley-benchmark-secret-0123456789"
        let app = try ParleyApp(settings: settings, secret: secret, providers: providers)
        try app.start()
        var stops: [Double] = []
        var answersOverTooSoon = 0
        do {
            for interruption in trials {
                let url = URL(string: "ws://127.0.0.1:\(app.port)/v1/realtime")!
                let trial = "plain client, lead \(leadMs) ms, \(interruption.voice) '\(interruption.text)'"
                switch try await interruptLongAnswer(question, with: interruption, url: url, secret: secret) {
                case .stopped(let stopMs):
                    stops.append(stopMs)
                    log(String(format: "%@: the agent stopped at the listener %.0f ms after the onset", trial, stopMs))
                case .notStopped:
                    log("\(trial): the agent was not stopped")
                case .answerOverBeforeInterruption:
                    answersOverTooSoon += 1
                    log("\(trial): the answer had been heard to its end before the interruption; not counted")
                }
            }
        } catch {
            await app.shutdown()
            throw error
        }
        await app.shutdown()
        let setting = leadMs == 0 ? "unpaced (PARLEY_WEBSOCKET_AUDIO_LEAD_MS=0), for comparison" : "defaults (speech paced, \(leadMs) ms lead)"
        let name = "plain client (plays what it gets, stops at speech_started): meant interruption's first voiced chunk sent -> agent's audio stops at the listener, embedded defaults, \(setting)"
        results.append(BenchmarkResult(
            area: "interruption-plain-client", name: "\(name), p50", value: percentile(stops, 50), unit: "ms",
            target: leadMs == 0 ? "" : "<= 500 ms", meetsTarget: leadMs == 0 ? nil : percentile(stops, 50) <= 500))
        results.append(BenchmarkResult(
            area: "interruption-plain-client", name: "  meant interruptions that stopped the agent, \(setting)", value: Double(stops.count),
            unit: "of \(trials.count - answersOverTooSoon) (\(answersOverTooSoon) answers ended before their interruption)", target: "", meetsTarget: nil))
    }
    return results
}

/// How one interruption went.
private enum PlainClientTrial {
    /// The agent fell silent at the listener this long after the interruption's first voiced chunk was sent.
    case stopped(afterMs: Double)
    case notStopped
    /// The model's answer was shorter than the 1.5 s before the interruption: nothing to interrupt.
    case answerOverBeforeInterruption
}

/// One session: asks `question`, lets the answer play for 1.5 s, says `interruption`.
private func interruptLongAnswer(
    _ question: ConversationQuestion, with interruption: ConversationQuestion, url: URL, secret: String
) async throws -> PlainClientTrial {
    let connection = try await WebSocketClient.connect(to: url, headers: ["Authorization": "Bearer \(secret)"])
    let listener = PlainClientListener()
    let reader = Task {
        for await message in connection.messages {
            if case .text(let text) = message { listener.record(text) }
        }
    }
    defer {
        connection.close()
        reader.cancel()
    }
    let microphone = PacedMicrophone(connection: connection)
    try await microphone.sendSilence(for: .milliseconds(500))
    for chunk in question.chunks { try await microphone.send(chunk) }
    try await microphone.sendSilence(until: { listener.firstAudioAt != nil }, deadline: .seconds(60), awaiting: "no reply")
    let interruptAt = listener.firstAudioAt! + .milliseconds(1_500)
    try await microphone.sendSilence(until: { ContinuousClock.now >= interruptAt }, deadline: .seconds(10), awaiting: "the interruption's moment")
    guard listener.isPlaying(at: .now) else { return .answerOverBeforeInterruption }
    var onset: ContinuousClock.Instant?
    for chunk in interruption.chunks {
        try await microphone.send(chunk)
        if onset == nil, EndOfSpeech.lastVoicedSample(in: chunk) != nil { onset = .now }
    }
    try await microphone.sendSilence(until: { listener.speechStartedAt != nil }, deadline: .seconds(10), awaiting: "no speech_started for the interruption")
    guard let onset, let stoppedAt = listener.silentAt() else { return .notStopped }
    return .stopped(afterMs: Double((stoppedAt - onset).milliseconds))
}

/// What a client that plays the agent's audio as it arrives hears: each delta plays after
/// the ones before it, and playback stops at `speech_started`.
private final class PlainClientListener: Sendable {
    private struct State {
        var firstAudioAt: ContinuousClock.Instant?
        /// When the audio received so far has all been played.
        var playedOutAt: ContinuousClock.Instant?
        var speechStartedAt: ContinuousClock.Instant?
    }

    private let state = Locked(State())

    var firstAudioAt: ContinuousClock.Instant? { state.withLock { $0.firstAudioAt } }
    var speechStartedAt: ContinuousClock.Instant? { state.withLock { $0.speechStartedAt } }

    func isPlaying(at instant: ContinuousClock.Instant) -> Bool {
        state.withLock { ($0.playedOutAt ?? instant) > instant }
    }

    /// When the listener stopped hearing the agent: at `speech_started`, or earlier when the
    /// audio received before it had all been played.
    func silentAt() -> ContinuousClock.Instant? {
        state.withLock { state in
            guard let started = state.speechStartedAt else { return nil }
            return min(started, state.playedOutAt ?? started)
        }
    }

    func record(_ text: String) {
        let now = ContinuousClock.now
        guard let event = try? JSONValue(parsing: text), let type = event["type"]?.stringValue else { return }
        state.withLock { state in
            switch type {
            case "response.output_audio.delta":
                // Audio after the client stopped playing is never heard.
                guard state.speechStartedAt == nil, let delta = event["delta"]?.stringValue else { return }
                let length = Duration.milliseconds(RealtimeAudioFormat.pcm16.milliseconds(ofBase64: delta))
                if state.firstAudioAt == nil { state.firstAudioAt = now }
                state.playedOutAt = max(state.playedOutAt ?? now, now) + length
            case "input_audio_buffer.speech_started":
                if state.firstAudioAt != nil, state.speechStartedAt == nil { state.speechStartedAt = now }
            default:
                break
            }
        }
    }
}

private func log(_ line: String) {
    FileHandle.standardError.write(Data("interruption, plain client: \(line)\n".utf8))
}
