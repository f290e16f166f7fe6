import BenchmarkHarness
import Foundation
import ParleyLocal
import ParleyServer

/// How many concurrent conversations one server holds on these 2 cores on the embedded offline
/// stack (issue 40), with each Whisper model as the ear: Silero VAD, whisper.cpp in process,
/// SmolLM2 on the supervised llama-server and the Piper voice — `ProviderFactory.make` with the
/// server's defaults, only the Whisper model chosen (as `--asr-model` does).
///
/// Every session is a realtime WebSocket client holding a conversation as the conversation
/// benchmark's does (`RealtimeConversation`): different flite questions (`ConversationQuestion`)
/// paced in real time, each asked half a second after the previous reply has finished playing.
/// Searched by the rule every capacity figure uses (`CapacitySearch`): a trial asks one
/// unmeasured warm-up question in a session of its own, then starts its sessions, session k
/// k·5 s/N after the first, so their first questions end spread over about one turn (a question
/// and a short reply) as people arriving independently would, not all at once. A trial holds
/// when every question is answered and the p90 from the question's last voiced sample sent to
/// the first `response.output_audio.delta` received is within `EmbeddedCapacity.p90LimitMs`.
/// The clients run in the server's process, so they take some of the same two cores.
func runEmbeddedCapacityBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    let questions = try ConversationQuestion.script(turns: 12)
    let warmUp = try ConversationQuestion(text: "Hello, can you hear me?", voice: "slt")
    var results: [BenchmarkResult] = []
    for model in WhisperModel.allCases {
        results += try await EmbeddedCapacity(ear: model, quick: quick, questions: questions, warmUp: warmUp).measure()
    }
    return results
}

/// The capacity search of the embedded stack with one Whisper model as the ear.
private struct EmbeddedCapacity {
    /// The p90 voice-to-voice latency a trial may reach and hold: 1.5 s from the end of the
    /// question to the first sound of the reply. People answer each other within a few hundred
    /// milliseconds and notice a gap of a second; by 1.5 s a caller starts to wonder whether they
    /// were heard, and much later they repeat themselves or talk over the reply, so up to 1.5 s
    /// on nine turns in ten is still a conversation that works, if a slow one. p90 rather than
    /// p99: a trial has only a few dozen turns, so its p99 is its single slowest turn, and one
    /// slow turn in ten does not break a conversation; p90 is also what the conversation
    /// area's targets judge. (Below ten turns in a trial the nearest-rank p90 is the slowest
    /// turn, so the smallest counts are judged on every turn.)
    static let p90LimitMs = 1_500.0
    /// How long after the first session the last one starts (session k at k·spread/N).
    private static let arrivalSpread = Duration.seconds(5)
    private static let area = "embedded-capacity"

    var ear: WhisperModel
    var quick: Bool
    var questions: [ConversationQuestion]
    var warmUp: ConversationQuestion

    private var questionsPerSession: Int { quick ? 1 : 3 }
    private var search: CapacitySearch {
        quick ? CapacitySearch(ladder: [1], ceiling: 2) : CapacitySearch(ladder: [1, 2], ceiling: 16)
    }
    private var earName: String { "Whisper \(ear.rawValue)" }

    /// Starts a server on the embedded stack with this ear, runs the search, and stops it all.
    func measure() async throws -> [BenchmarkResult] {
        var settings = ServerSettings()
        settings.port = 0
        settings.whisperModel = ear
        settings.dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-bench-embedded-capacity-\(getpid())")
        defer { try? FileManager.default.removeItem(at: settings.dataDirectory) }
        let providers = try await ProviderFactory.make(settings)
        let app: ParleyApp
        do {
            // ProviderFactory hears with tiny.en when the chosen model cannot load; that would measure the wrong ear.
            guard providers.components.contains(where: { $0.name == "whisper.cpp \(ear.rawValue)" }) else {
                throw EmbeddedBenchmarkFailure("\(earName) did not load (is its model installed? scripts/setup)")
            }
            app = try ParleyApp(settings: settings, secret: BenchmarkServer.defaultSecret, providers: providers, log: .silent)
            try app.start()
        } catch {
            await providers.shutdown()
            throw error
        }
        guard let url = URL(string: "ws://127.0.0.1:\(app.port)/v1/realtime?parley_events=true") else {
            await app.shutdown()
            throw EmbeddedBenchmarkFailure("no URL for port \(app.port)")
        }
        let llamaServers = ProcessFigures.childProcessIDs(named: "llama-server")
        let bracket = await search.run(trial: { await trial(sessions: $0, url: url, llamaServers: llamaServers) }, holds: \.held)
        // Closes the sessions and stops the providers it was given (llama-server among them).
        await app.shutdown()
        return results(bracket)
    }

    /// One trial: the warm-up question, then `sessions` conversations at once.
    private func trial(sessions: Int, url: URL, llamaServers: [Int32]) async -> ConversationCapacityTrial {
        // The warm-up is not measured; a trial that follows a failed one is judged on its own sessions.
        _ = await Self.converse([warmUp], url: url, label: "\(earName) warm-up")
        let cpuAtStart = ProcessFigures.ownCPUSeconds(withChildren: llamaServers)
        let start = ContinuousClock.now
        let latencies = await withTaskGroup(of: [Double].self) { group in
            for session in 0..<sessions {
                let asked = ConversationCapacityTrial.questionIndices(
                    session: session, questionsPerSession: questionsPerSession, available: questions.count
                ).map { questions[$0] }
                let label = "\(earName), \(sessions) concurrent, session \(session + 1)"
                group.addTask {
                    try? await Task.sleep(for: Self.arrivalSpread * session / sessions)
                    return await Self.converse(asked, url: url, label: label)
                }
            }
            return await group.reduce(into: [Double]()) { $0 += $1 }
        }
        let trial = ConversationCapacityTrial(
            sessions: sessions, questionsPerSession: questionsPerSession, latenciesMs: latencies, p90LimitMs: Self.p90LimitMs,
            cpuSeconds: ProcessFigures.ownCPUSeconds(withChildren: llamaServers) - cpuAtStart,
            elapsedSeconds: (ContinuousClock.now - start).timeInterval
        )
        log(String(format: "%@, %d concurrent: %d of %d answered, p50 %.0f ms, p90 %.0f ms, %.0f %% of a core per session (%@)",
                   earName, sessions, trial.answered, trial.questionsAsked, trial.p50, trial.p90,
                   trial.cpuShareOfOneCorePerSession * 100, trial.held ? "held" : "failed"))
        return trial
    }

    /// Holds one conversation of `questions`; returns the latency of each question answered, up
    /// to the first that was not (the session ends there, as a caller would hang up).
    private static func converse(_ questions: [ConversationQuestion], url: URL, label: String) async -> [Double] {
        var latencies: [Double] = []
        do {
            let conversation = try await RealtimeConversation(url: url, secret: BenchmarkServer.defaultSecret)
            defer { conversation.close() }
            for question in questions {
                let turn = try await conversation.ask(question)
                latencies.append(turn.voiceToVoiceMs)
                log(String(format: "%@: %.0f ms = %@; heard \"%@\"", label, turn.voiceToVoiceMs, turn.split, turn.transcript))
            }
        } catch {
            log("\(label): \(error)")
        }
        return latencies
    }

    /// Every trial's figures, the largest count held's p50 and CPU, and the bracket.
    private func results(_ bracket: CapacityBracket<ConversationCapacityTrial>) -> [BenchmarkResult] {
        let latency = "last voiced sample sent → first response.output_audio.delta received"
        var results = bracket.runs.enumerated().map { index, run in
            let trial = run.figures
            return BenchmarkResult(
                area: Self.area,
                name: "embedded sessions, \(earName), trial \(index + 1), \(trial.sessions) concurrent: \(latency) (p90) / p50 / questions answered",
                value: trial.p90,
                unit: String(format: "ms / p50 %.0f ms / %d of %d answered (%@)", trial.p50, trial.answered, trial.questionsAsked, run.held ? "held" : "failed"),
                target: "", meetsTarget: nil)
        }
        if let held = bracket.held?.figures {
            let largest = "embedded sessions, \(earName), \(held.sessions) concurrent (the largest count held)"
            results.append(BenchmarkResult(
                area: Self.area, name: "\(largest): \(latency) (p50)", value: held.p50, unit: "ms", target: "", meetsTarget: nil))
            results.append(BenchmarkResult(
                area: Self.area, name: "\(largest): CPU per session (this process, its clients included, and llama-server)",
                value: held.cpuShareOfOneCorePerSession * 100, unit: "% of one core", target: "", meetsTarget: nil))
        }
        let asked = questionsPerSession == 1 ? "1 question a session" : "\(questionsPerSession) different questions a session"
        let rule = "every question answered, p90 \(latency) ≤ \(Int(Self.p90LimitMs)) ms, \(asked)"
        results.append(.capacity(area: Self.area, name: "embedded sessions held, \(earName) (\(rule))", bracket: bracket, noun: "sessions"))
        return results
    }
}

private func log(_ line: String) {
    FileHandle.standardError.write(Data("embedded-capacity: \(line)\n".utf8))
}
