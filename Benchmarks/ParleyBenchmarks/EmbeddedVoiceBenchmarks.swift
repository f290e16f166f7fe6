import BenchmarkHarness
import Foundation
import ParleyCore
import ParleyLocal
import ParleyNet
import ParleyServer

/// Voice-to-voice latency of the embedded offline stack (issues 6 and 7): a 2 s question
/// synthesised with flite goes into a real `VoiceSession` — Silero VAD, whisper.cpp, SmolLM2 on
/// the supervised llama-server, flite — paced in real time in 20 ms chunks at 24 kHz with
/// server VAD and a 300 ms silence window; then the same through the real server (`ParleyApp`,
/// a realtime WebSocket client sending `input_audio_buffer.append`). Per turn: from the last
/// speech sample of the question (in audio time) to the first chunk of the spoken answer, with
/// the stages in between, and how long Parley's and llama-server's threads waited for a CPU
/// meanwhile (on a shared machine, the share of the latency other programs took). Each turn is
/// a fresh conversation, so every turn asks the same thing of the same model.
func runEmbeddedVoiceBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    var settings = ServerSettings()
    settings.host = "127.0.0.1"
    settings.port = 0
    settings.dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-bench-embedded-\(getpid())")
    let providers = try await ProviderFactory.make(settings)
    defer { try? FileManager.default.removeItem(at: settings.dataDirectory) }
    let turns = quick ? 3 : 10
    do {
        let question = try await SpokenQuestion(text: "What is the weather like in Paris today?", providers: providers)
        var results: [BenchmarkResult] = []
        // What preemptive generation and transcription (both on by default) save: the same
        // turns without the first, then without either.
        for preemption in Preemption.allCases {
            results += try await measureSession(question: question, providers: providers, settings: settings, turns: turns, preemption: preemption)
        }
        results += try await measureServer(question: question, providers: providers, settings: settings, turns: turns)
        await providers.shutdown()
        return results
    } catch {
        // Stopping twice is harmless: the server's shutdown may already have stopped them.
        await providers.shutdown()
        throw error
    }
}

/// What a session does before its turn's silence window has run out.
private enum Preemption: CaseIterable {
    /// Transcribes the turn and starts the reply (the default).
    case transcriptionAndGeneration
    /// Transcribes the turn; the reply starts when the turn ends.
    case transcription
    /// Nothing: the turn is transcribed when it ends.
    case nothing

    /// How the figures' names say it.
    var label: String {
        switch self {
        case .transcriptionAndGeneration: ""
        case .transcription: ", without preemptive generation"
        case .nothing: ", without preemptive transcription or generation"
        }
    }
}

/// The `VoiceSession` figures (issue 6): sessions built the way the realtime endpoint builds them.
private func measureSession(
    question: SpokenQuestion, providers: ProviderSet, settings: ServerSettings, turns: Int, preemption: Preemption
) async throws -> [BenchmarkResult] {
    let sessionProviders = VoiceSessionProviders(
        recognizer: providers.recognizer, model: providers.languageModel, synthesizer: providers.synthesizer,
        makeVoiceActivityDetector: providers.makeVoiceActivityDetector, makeResampler: providers.makeResampler
    )
    var configuration = VoiceSessionConfiguration(
        instructions: settings.systemPrompt, turnDetection: ServerVADSettings(silenceDurationMs: 300)
    )
    configuration.preemptiveGeneration = preemption == .transcriptionAndGeneration
    if preemption == .nothing { configuration.preemptiveTranscriptionAfterMs = nil }
    let label = preemption.label
    let cpuWait = CPUWait()
    var figures: [VoiceTurnFigures] = []
    for turn in 0...turns {
        let session = VoiceSession(providers: sessionProviders, configuration: configuration)
        let recorder = VoiceTurnRecorder(cpuWait: cpuWait)
        let listener = Task {
            for await event in session.events { recorder.record(event) }
        }
        let start = ContinuousClock.now + .milliseconds(100)
        try await question.play(from: start, until: { recorder.isAnswered }) { chunk in
            try await session.appendAudio(chunk, sampleRate: SpokenQuestion.sampleRate)
            if recorder.takeCancellation() { await session.cancelResponse() }
        }
        await session.close()
        await listener.value
        let outcome = try recorder.figures(speechEnd: start + question.speechEnd, turn: turn)
        log("session turn \(turn)\(turn == 0 ? " (warm-up)" : "")\(label): \(outcome.summary)")
        if turn > 0 { figures.append(outcome) }
    }
    // A best case carries no target: the conversation area's figure is the one judged.
    return voiceResults(figures, label: label)
}

/// The server figures (issue 7): one realtime WebSocket connection per turn to `ParleyApp`.
private func measureServer(
    question: SpokenQuestion, providers: ProviderSet, settings: ServerSettings, turns: Int
) async throws -> [BenchmarkResult] {
    let secret = "parley-benchmark-secret-0123456789"
    let app = try ParleyApp(settings: settings, secret: secret, providers: providers)
    try app.start()
    guard let url = URL(string: "ws://127.0.0.1:\(app.port)/v1/realtime?parley_events=true") else {
        throw EmbeddedBenchmarkFailure("no URL for port \(app.port)")
    }
    let figures: [VoiceTurnFigures]
    do {
        figures = try await measureServerTurns(question: question, url: url, secret: secret, turns: turns)
    } catch {
        await app.shutdown()
        throw error
    }
    // Closes the sessions and the listener, and stops the providers it was given.
    await app.shutdown()
    return voiceResults(figures, label: " via the server")
}

private func measureServerTurns(question: SpokenQuestion, url: URL, secret: String, turns: Int) async throws -> [VoiceTurnFigures] {
    let cpuWait = CPUWait()
    var figures: [VoiceTurnFigures] = []
    for turn in 0...turns {
        let connection = try await WebSocketClient.connect(to: url, headers: ["Authorization": "Bearer \(secret)"])
        let recorder = VoiceTurnRecorder(cpuWait: cpuWait)
        let listener = Task {
            for await message in connection.messages {
                if case .text(let text) = message { recorder.record(serverEvent: text) }
            }
        }
        let start = ContinuousClock.now + .milliseconds(100)
        try await question.play(from: start, until: { recorder.isAnswered }) { chunk in
            let audio = PCM16Buffer(samples: chunk).base64EncodedString()
            try connection.send(.text(#"{"type":"input_audio_buffer.append","audio":"\#(audio)"}"#))
            if recorder.takeCancellation() { try connection.send(.text(#"{"type":"response.cancel"}"#)) }
        }
        connection.close()
        await listener.value
        let outcome = try recorder.figures(speechEnd: start + question.speechEnd, turn: turn)
        log("server turn \(turn)\(turn == 0 ? " (warm-up)" : ""): \(outcome.summary)")
        if turn > 0 { figures.append(outcome) }
    }
    return figures
}

/// The figures of several turns: voice-to-voice p50 and max, and each stage's p50.
private func voiceResults(_ figures: [VoiceTurnFigures], label: String) -> [BenchmarkResult] {
    let name = "embedded stack, best case (a fresh conversation every turn, the same 2 s question): last speech sample -> first audio\(label)"
    let latencies = figures.map(\.voiceToVoiceMs)
    let p50 = percentile(latencies, 50)
    var results = [
        BenchmarkResult(area: "embedded", name: "\(name), p50", value: p50, unit: "ms", target: "", meetsTarget: nil),
        BenchmarkResult(area: "embedded", name: "\(name), max of \(figures.count) turns",
                        value: latencies.max() ?? .nan, unit: "ms", target: "", meetsTarget: nil),
    ]
    for (stage, values) in VoiceTurnFigures.stages(of: figures) {
        results.append(BenchmarkResult(area: "embedded", name: "  stage \(stage)\(label), p50",
                                       value: percentile(values, 50), unit: "ms", target: "", meetsTarget: nil))
    }
    return results
}

private func log(_ line: String) {
    FileHandle.standardError.write(Data("embedded voice: \(line)\n".utf8))
}

/// A spoken question: flite's voice at the realtime rate (24 kHz) in 20 ms chunks, after a
/// short quiet lead-in.
private struct SpokenQuestion: Sendable {
    static let sampleRate = 24_000
    static let chunkLength = 480
    static let chunkDuration = Duration.milliseconds(20)
    static let leadIn = Duration.milliseconds(400)
    /// The longest a turn may take to be answered before the benchmark gives up on it.
    static let answerDeadline = Duration.seconds(20)

    /// Lead-in and speech, in chunks; silence follows.
    let chunks: [[Int16]]
    /// Audio time of the last speech sample, from the start of the first chunk.
    let speechEnd: Duration

    init(text: String, providers: ProviderSet) async throws {
        var speech: [Int16] = []
        let synthesizer = providers.synthesizer
        for try await chunk in synthesizer.synthesize(text, options: SpeechOptions()) { speech += chunk }
        var resampler = providers.makeResampler(synthesizer.sampleRate, Self.sampleRate)
        var resampled = resampler.process(SampleConversion.float(speech))
        resampled += resampler.flush()
        // The last voiced sample ends the speech; flite's trailing quiet is dropped.
        guard let last = EndOfSpeech.lastVoicedSample(in: resampled) else {
            throw EmbeddedBenchmarkFailure("flite produced no speech for \"\(text)\"")
        }
        let leadInSamples = Int(Self.leadIn.milliseconds) * Self.sampleRate / 1000
        let audio = [Int16](repeating: 0, count: leadInSamples) + SampleConversion.pcm16(Array(resampled[...last]))
        chunks = stride(from: 0, to: audio.count, by: Self.chunkLength).map {
            let chunk = Array(audio[$0..<min($0 + Self.chunkLength, audio.count)])
            return chunk + [Int16](repeating: 0, count: Self.chunkLength - chunk.count)
        }
        speechEnd = .microseconds((leadInSamples + last + 1) * 1_000_000 / Self.sampleRate)
        log(String(format: "question \"%@\": %.2f s of speech", text, Double(last + 1) / Double(Self.sampleRate)))
    }

    /// Sends the question and then silence in real time — chunk k at `start` + (k + 1) × 20 ms,
    /// when a microphone would have delivered it — until `isAnswered` or the deadline.
    /// - Throws: what `send` throws, or `EmbeddedBenchmarkFailure` past the deadline.
    func play(
        from start: ContinuousClock.Instant, until isAnswered: () -> Bool, send: ([Int16]) async throws -> Void
    ) async throws {
        let silence = [Int16](repeating: 0, count: Self.chunkLength)
        var index = 0
        while !isAnswered() {
            let deadline = start + Self.chunkDuration * (index + 1)
            guard deadline - start < Self.answerDeadline else {
                throw EmbeddedBenchmarkFailure("no answer within \(Self.answerDeadline)")
            }
            try await Task.sleep(until: deadline, clock: .continuous)
            try await send(index < chunks.count ? chunks[index] : silence)
            index += 1
        }
    }
}

/// One answered turn, in milliseconds.
private struct VoiceTurnFigures: Sendable {
    /// End of speech → first reply audio chunk out.
    var voiceToVoiceMs: Double
    /// End of speech → the turn detector's stop (the silence window and VAD lag).
    var turnEndMs: Double
    /// Turn end → final transcript.
    var transcriptionMs: Double
    /// Turn end → first token.
    var firstTokenMs: Double
    /// Turn end → first complete sentence of the reply.
    var firstSentenceMs: Double
    /// Turn end → first audio chunk, as the session measured it.
    var firstAudioMs: Double
    /// Time the threads of Parley and llama-server spent ready to run but waiting for a CPU
    /// between the turn end and the first audio (summed over threads).
    var cpuWaitMs: Double
    var transcript: String
    var reply: String

    /// Each stage with its values, in pipeline order.
    static func stages(of figures: [VoiceTurnFigures]) -> [(String, [Double])] {
        [
            ("end of speech -> turn end (VAD, 300 ms silence window)", figures.map(\.turnEndMs)),
            ("turn end -> final transcript (whisper)", figures.map(\.transcriptionMs)),
            ("turn end -> first LLM token", figures.map(\.firstTokenMs)),
            ("turn end -> first sentence", figures.map(\.firstSentenceMs)),
            ("turn end -> first audio out (flite)", figures.map(\.firstAudioMs)),
            ("CPU wait (run queue, summed over threads) of Parley + llama-server, turn end -> first audio", figures.map(\.cpuWaitMs)),
        ]
    }

    var summary: String {
        String(format: "%.0f ms (turn end %.0f, transcript %.0f, token %.0f, sentence %.0f, audio %.0f; CPU wait %.0f) heard \"%@\" replied \"%@\"",
               voiceToVoiceMs, turnEndMs, transcriptionMs, firstTokenMs, firstSentenceMs, firstAudioMs, cpuWaitMs, transcript, reply)
    }
}

/// What one turn's events said and when they arrived, from the session or from the server.
///
/// `@unchecked Sendable`: every stored property is guarded by `lock`.
private final class VoiceTurnRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var speechStoppedAt: ContinuousClock.Instant?
    private var firstSentenceAt: ContinuousClock.Instant?
    private var firstAudioAt: ContinuousClock.Instant?
    private var segmenter = SentenceSegmenter()
    private var transcript = ""
    private var reply = ""
    private var metrics: (transcription: Double?, firstToken: Double?, firstAudio: Double?)?
    private var failure: String?
    private var cancellationTaken = false
    private let cpuWait: CPUWait
    private var cpuWaitAtTurnEnd: Double?
    private var cpuWaitAtFirstAudio: Double?

    /// A recorder that samples `cpuWait` when the turn ends and when the first audio arrives.
    init(cpuWait: CPUWait) { self.cpuWait = cpuWait }

    /// Whether the turn's metrics arrived (they come last) or it failed.
    var isAnswered: Bool { lock.withLock { metrics != nil || failure != nil } }

    /// `true` once, as soon as the first reply audio arrived: the turn is measured, and the
    /// rest of the (often rambling) reply is cancelled so that it does not load the next turn.
    func takeCancellation() -> Bool {
        lock.withLock {
            guard firstAudioAt != nil, !cancellationTaken else { return false }
            cancellationTaken = true
            return true
        }
    }

    /// Records a session event.
    func record(_ event: VoiceSessionEvent) {
        let now = ContinuousClock.now
        switch event {
        case .speechStopped: turnEnded(at: now)
        case .userTranscriptFinal(_, let text, _): lock.withLock { transcript = text }
        case .agentTextDelta(_, _, let delta): replyText(delta, at: now)
        case .agentAudio: firstAudio(at: now)
        case .turnMetrics(let turn):
            lock.withLock { metrics = (turn.transcriptionMs, turn.firstTokenMs, turn.firstAudioMs) }
        case .error(let error): lock.withLock { failure = failure ?? "\(error.code): \(error.message)" }
        default: break
        }
    }

    /// Records a realtime server event (JSON text).
    func record(serverEvent text: String) {
        let now = ContinuousClock.now
        guard let event = try? JSONValue(parsing: text), let type = event["type"]?.stringValue else { return }
        switch type {
        case "input_audio_buffer.speech_stopped": turnEnded(at: now)
        case "conversation.item.input_audio_transcription.completed":
            lock.withLock { transcript = event["transcript"]?.stringValue ?? "" }
        case "response.output_audio_transcript.delta": replyText(event["delta"]?.stringValue ?? "", at: now)
        case "response.output_audio.delta": firstAudio(at: now)
        case "parley.turn_metrics":
            lock.withLock {
                metrics = (event["transcription_ms"]?.numberValue, event["first_token_ms"]?.numberValue, event["first_audio_ms"]?.numberValue)
            }
        case "error" where event["error"]?["code"]?.stringValue != "response_cancel_not_active":
            // (The reply may finish before its cancellation arrives; that error is expected.)
            lock.withLock { failure = failure ?? (event["error"]?["message"]?.stringValue ?? text) }
        default: break
        }
    }

    private func turnEnded(at now: ContinuousClock.Instant) {
        let wait = cpuWait.seconds()
        lock.withLock {
            guard speechStoppedAt == nil else { return }
            speechStoppedAt = now
            cpuWaitAtTurnEnd = wait
        }
    }

    private func firstAudio(at now: ContinuousClock.Instant) {
        guard lock.withLock({ firstAudioAt == nil }) else { return }
        let wait = cpuWait.seconds()
        lock.withLock {
            firstAudioAt = now
            cpuWaitAtFirstAudio = wait
        }
    }

    private func replyText(_ delta: String, at now: ContinuousClock.Instant) {
        lock.withLock {
            reply += delta
            if !segmenter.append(delta).isEmpty { firstSentenceAt = firstSentenceAt ?? now }
        }
    }

    /// The turn's figures, with `speechEnd` the wall-clock moment the question's speech ended.
    /// - Throws: `EmbeddedBenchmarkFailure` when the turn failed or a stage is missing.
    func figures(speechEnd: ContinuousClock.Instant, turn: Int) throws -> VoiceTurnFigures {
        try lock.withLock {
            if let failure { throw EmbeddedBenchmarkFailure("turn \(turn) failed: \(failure)") }
            guard let speechStoppedAt, let firstAudioAt, let metrics, let cpuWaitAtTurnEnd, let cpuWaitAtFirstAudio,
                  let transcription = metrics.transcription, let firstToken = metrics.firstToken, let firstAudio = metrics.firstAudio
            else { throw EmbeddedBenchmarkFailure("turn \(turn) is missing a stage (heard \"\(transcript)\", replied \"\(reply)\")") }
            // A reply shorter than one sentence is spoken when the model finishes.
            let sentenceAt = firstSentenceAt ?? firstAudioAt
            return VoiceTurnFigures(
                voiceToVoiceMs: (firstAudioAt - speechEnd).milliseconds,
                turnEndMs: (speechStoppedAt - speechEnd).milliseconds,
                transcriptionMs: transcription,
                firstTokenMs: firstToken,
                firstSentenceMs: (sentenceAt - speechStoppedAt).milliseconds,
                firstAudioMs: firstAudio,
                cpuWaitMs: (cpuWaitAtFirstAudio - cpuWaitAtTurnEnd) * 1000,
                transcript: transcript,
                reply: reply
            )
        }
    }
}

/// Run-queue wait of this process and its llama-server child: time their threads were ready to
/// run but another thread (often another program) had the CPU.
private struct CPUWait: Sendable {
    let processIDs: [Int32]

    /// Finds the llama-server child of this process (the embedded language model).
    init() {
        let own = getpid()
        let children = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.compactMap { entry -> Int32? in
            guard let pid = Int32(entry),
                  let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  stat.contains("(llama-server)"), let end = stat.lastIndex(of: ")") else { return nil }
            // After the command name: state, then the parent's pid.
            let fields = stat[stat.index(after: end)...].split(separator: " ")
            return fields.count > 1 && Int32(fields[1]) == own ? pid : nil
        } ?? []
        processIDs = [own] + children
    }

    /// The summed run-queue wait of the processes' live threads, in seconds.
    func seconds() -> Double {
        processIDs.reduce(0) { $0 + (ProcessFigures.runQueueWaitSeconds(pid: $1) ?? 0) }
    }
}
