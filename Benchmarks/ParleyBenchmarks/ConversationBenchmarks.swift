import BenchmarkHarness
import Foundation
import ParleyCore
import ParleyLocal
import ParleyServer

/// The conversation benchmark (issue 23): voice-to-voice latency as a client hears it, on the
/// embedded stack with the settings a user gets (Silero VAD, server VAD with a 300 ms silence
/// window, preemptive transcription and generation on).
///
/// One realtime WebSocket session to a real `ParleyApp` asks ten different questions, spoken
/// by two flite voices, in one conversation (each reply stays in the history). The audio goes
/// out as 20 ms `input_audio_buffer.append` chunks paced in real time, silence between the
/// questions, as a microphone would send it; after each reply has finished playing (as long
/// as its audio lasts from its first delta) the client waits half a second before asking the
/// next question. Per
/// turn: from sending the question's last voiced sample to receiving the first
/// `response.output_audio.delta`, with the stages the server reports in `parley.turn_metrics`.
/// Then the same with `semantic_vad` (eagerness auto) as the client's turn detection, with
/// preemptive transcription and generation off, and with Whisper base as the ear. The server reads its settings from the
/// environment as `parley serve` does (scripts/bench sets none).
func runConversationBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    let questions = try ConversationQuestion.script(turns: quick ? 4 : 10)
    for question in questions {
        log(String(format: "question \"%@\" (%@): %.2f s", question.text, question.voice, question.duration))
    }
    let warmUp = try ConversationQuestion(text: "Hello, can you hear me?", voice: "slt")
    var results: [BenchmarkResult] = []
    for setting in ConversationSetting.all {
        // The settings `parley serve` would read from this environment: the defaults, unless a
        // PARLEY_* variable says otherwise (to compare a setting, run with it set).
        var settings = ServerSettings.load(environment: ProcessInfo.processInfo.environment).0
        settings.port = 0
        settings.dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-bench-conversation-\(getpid())")
        if !setting.preemption {
            settings.preemptiveTranscriptionAfterMs = nil
            settings.preemptiveGeneration = false
        }
        if let model = setting.whisperModel { settings.whisperModel = model }
        defer { try? FileManager.default.removeItem(at: settings.dataDirectory) }
        let (figures, otherLoad) = try await measureConversation(questions, warmUp: warmUp, settings: settings, setting: setting)
        results += conversationResults(figures, otherLoad: otherLoad, setting: setting)
    }
    return results
}

/// One way the conversation runs: what it changes from the defaults, how figure names say it,
/// and the targets its p50 and p90 are judged against.
private struct ConversationSetting {
    /// How stage and turn figures name the setting.
    var label: String
    /// The turn detection and preemption part of the main figures' names.
    var conditions: String
    var preemption = true
    /// The client's `turn_detection` (JSON), sent in a `session.update` before the first question;
    /// `nil` keeps the server's default (`server_vad`, 300 ms of silence).
    var turnDetection: String?
    /// The embedded Whisper model in place of the server's (`PARLEY_ASR_MODEL`, tiny.en by default).
    var whisperModel: WhisperModel?
    var p50TargetMs: Double?
    var p90TargetMs: Double?

    static let all = [
        ConversationSetting(
            label: "defaults", conditions: "Silero VAD, 300 ms silence, preemptive transcription and generation on (defaults)",
            p50TargetMs: 700, p90TargetMs: 900),
        ConversationSetting(
            label: "semantic_vad auto",
            conditions: "Silero VAD, semantic_vad (eagerness auto), preemptive transcription and generation on",
            turnDetection: #"{"type":"semantic_vad","eagerness":"auto"}"#, p50TargetMs: 750, p90TargetMs: 1_200),
        ConversationSetting(
            label: "preemption off", conditions: "Silero VAD, 300 ms silence, preemptive transcription and generation off",
            preemption: false),
        // The larger ear (issue 40): what it costs a conversation, against the defaults above.
        ConversationSetting(
            label: "Whisper base",
            conditions: "Whisper base (multilingual) in place of tiny.en, Silero VAD, 300 ms silence, preemptive transcription and generation on",
            whisperModel: .base),
    ]
}

/// Runs the conversation against a fresh server (and llama-server) with `settings`, after
/// one warm-up turn in a session of its own. Also returns how much of one core other
/// programs used meanwhile (on a shared machine, what the figures had to compete with).
private func measureConversation(
    _ questions: [ConversationQuestion], warmUp: ConversationQuestion, settings: ServerSettings, setting: ConversationSetting
) async throws -> ([ConversationTurnFigures], otherLoad: Double) {
    let providers = try await ProviderFactory.make(settings)
    let secret = "parley-benchmark-secret-0123456789"
    let app: ParleyApp
    do {
        app = try ParleyApp(settings: settings, secret: secret, providers: providers)
        try app.start()
    } catch {
        await providers.shutdown()
        throw error
    }
    do {
        guard let url = URL(string: "ws://127.0.0.1:\(app.port)/v1/realtime?parley_events=true") else {
            throw ConversationBenchmarkFailure("no URL for port \(app.port)")
        }
        _ = try await converse([warmUp], url: url, secret: secret, label: "warm-up", turnDetection: setting.turnDetection)
        let load = OtherProgramsLoad()
        let figures = try await converse(questions, url: url, secret: secret, label: setting.label, turnDetection: setting.turnDetection)
        let otherLoad = load.shareOfOneCore()
        log(String(format: "%@: other programs used %.0f %% of one core", setting.label, otherLoad * 100))
        // Closes the sessions and stops the providers it was given.
        await app.shutdown()
        return (figures, otherLoad)
    } catch {
        await app.shutdown()
        throw error
    }
}

/// Asks `questions` one after the other in one realtime session (with `turnDetection`, when
/// given, set first); returns each turn's figures.
private func converse(
    _ questions: [ConversationQuestion], url: URL, secret: String, label: String, turnDetection: String?
) async throws -> [ConversationTurnFigures] {
    let conversation = try await RealtimeConversation(url: url, secret: secret, turnDetection: turnDetection)
    defer { conversation.close() }
    var figures: [ConversationTurnFigures] = []
    for (index, question) in questions.enumerated() {
        let turn = try await conversation.ask(question)
        log(String(format: "%@ turn %d (%@): %.0f ms = %@; prompt %@ tokens; heard \"%@\" replied \"%@\"",
                   label, index + 1, question.voice, turn.voiceToVoiceMs, turn.split,
                   turn.inputTokens.map(String.init) ?? "?", turn.transcript, turn.reply))
        figures.append(turn)
    }
    return figures
}

/// p50 and p90 (against the targets with preemption on, as a user gets it), max, each stage's
/// p50, and every turn's figure with its stages.
private func conversationResults(_ figures: [ConversationTurnFigures], otherLoad: Double, setting: ConversationSetting) -> [BenchmarkResult] {
    let conditions = "\(figures.count) turns in one session (history kept), different questions, 2 flite voices (slt, rms), \(setting.conditions)"
    let name = "conversation: last voiced sample (\(EndOfSpeech.voicedLevelLabel)) sent -> first response.output_audio.delta received, \(conditions)"
    let latencies = figures.map(\.voiceToVoiceMs)
    let p50 = percentile(latencies, 50)
    let p90 = percentile(latencies, 90)
    func result(_ name: String, _ value: Double, target: Double? = nil) -> BenchmarkResult {
        BenchmarkResult(area: "conversation", name: name, value: value, unit: "ms",
                        target: target.map { String(format: "<= %.0f ms", $0) } ?? "", meetsTarget: target.map { value <= $0 })
    }
    var results = [
        result("\(name), p50", p50, target: setting.p50TargetMs),
        result("\(name), p90", p90, target: setting.p90TargetMs),
        result("\(name), max", latencies.max() ?? .nan),
    ]
    results.append(BenchmarkResult(
        area: "conversation", name: "  CPU other programs used during the conversation (machine busy time less Parley's and llama-server's), \(setting.label)",
        value: otherLoad * 100, unit: "% of one core", target: "", meetsTarget: nil
    ))
    for (stage, values) in ConversationTurnFigures.stages(of: figures) {
        results.append(result("  stage \(stage), \(setting.label), p50", percentile(values, 50)))
    }
    for (index, turn) in figures.enumerated() {
        results.append(result("  turn \(index + 1), \(turn.question.voice), \"\(turn.question.text)\", \(setting.label): \(turn.split)", turn.voiceToVoiceMs))
    }
    return results
}

/// CPU time other programs take from the start: the machine's busy time less that of this
/// process and its llama-server.
private struct OtherProgramsLoad {
    private let start = ContinuousClock.now
    private let llamaServers = ProcessFigures.childProcessIDs(named: "llama-server")
    private let busyAtStart: Double
    private let ownAtStart: Double

    init() {
        busyAtStart = ProcessFigures.machineBusyCPUSeconds() ?? 0
        ownAtStart = ProcessFigures.ownCPUSeconds(withChildren: llamaServers)
    }

    /// Other programs' CPU time since the start, as a share of one core over the elapsed time.
    func shareOfOneCore() -> Double {
        let busy = (ProcessFigures.machineBusyCPUSeconds() ?? 0) - busyAtStart
        let own = ProcessFigures.ownCPUSeconds(withChildren: llamaServers) - ownAtStart
        return max(0, busy - own) / (ContinuousClock.now - start).timeInterval
    }
}

private func log(_ line: String) {
    FileHandle.standardError.write(Data("conversation: \(line)\n".utf8))
}
