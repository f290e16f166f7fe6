import ParleySync
import Testing
import ParleyTesting
@testable import ParleyCore

/// With server VAD the response starts on the early transcript while the silence window still
/// runs; nothing of it is heard before the turn ends, and it is dropped when the user speaks again.
@Suite struct PreemptiveGenerationTests {
    private static func isResponseStarted(_ event: VoiceSessionEvent) -> Bool {
        if case .responseStarted = event { true } else { false }
    }

    private static func isSpeechStopped(_ event: VoiceSessionEvent) -> Bool {
        if case .speechStopped = event { true } else { false }
    }

    /// Whether `condition` holds within 60 s, checked whenever the test task gets to run.
    private static func eventually(_ condition: () async -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if await condition() { return true }
            await Task.yield()
        }
        return false
    }

    @Test func theAnswerIsPreparedDuringTheSilenceAndHeardOnlyAfterTheTurnEnds() async throws {
        let speaking = AsyncGate()
        let model = ScriptedLanguageModel(replies: [.text("It is noon.")])
        let (session, recorder) = makeSession(
            recognizer: ScriptedSpeechRecognizer(texts: ["What time is it?"]), model: model,
            synthesizer: ScriptedSpeechSynthesizer(gate: speaking)
        )
        try await ScenarioAudio.ask(session)
        // 200 ms into the 300 ms window the reply is written and being spoken, but held back.
        await speaking.waitForArrivals(1)
        #expect(await recorder.count(Self.isSpeechStopped) == 0)
        #expect(await recorder.count(Self.isResponseStarted) == 0)
        #expect(await recorder.count(Match.textDelta) == 0)
        speaking.open()

        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 200), sampleRate: 16_000)
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        #expect(model.requests.count == 1, "the early answer was the turn's answer")
        #expect(model.requests.first?.messages.last == .user("What time is it?"))
        let events = await recorder.events
        let stopped = try #require(events.firstIndex(where: Self.isSpeechStopped))
        let transcript = try #require(events.firstIndex(where: Match.finalTranscript))
        let started = try #require(events.firstIndex(where: Self.isResponseStarted))
        let firstText = try #require(events.firstIndex(where: Match.textDelta))
        let firstAudio = try #require(events.firstIndex(where: Match.audio))
        #expect(stopped < transcript && transcript < started && started < firstText && firstText < firstAudio)
        #expect(await session.ledger.messages == [.user("What time is it?"), .assistant(text: "It is noon.")])
        let metrics = try #require(await session.metricsHistory.first)
        #expect(metrics.firstAudioMs != nil)
        await session.close()
        #expect(await session.hasRunningTasks == false)
    }

    @Test func anAnswerReadyBeforeTheTurnEndsGoesOutWithTheAudioThatEndsIt() async throws {
        let providers = VoiceSessionProviders(
            recognizer: ScriptedSpeechRecognizer(texts: ["What time is it?"]), model: ScriptedLanguageModel(replies: [.text("It is noon.")]),
            synthesizer: ScriptedSpeechSynthesizer(), tools: ToolRegistry(),
            makeVoiceActivityDetector: { LoudnessVAD() }, makeResampler: { _, _ in PassThroughResampler() }
        )
        let session = VoiceSession(providers: providers, configuration: VoiceSessionConfiguration())
        let delivered = Locked<[VoiceSessionEvent]>([])
        await session.deliverEvents { event in delivered.withLock { $0.append(event) } }
        try await ScenarioAudio.ask(session)
        #expect(await Self.eventually { await session.earlyAnswerIsComplete })

        // The chunk that completes the silence ends the turn, and within the same call the
        // transcript is final and the whole answer goes out: no task or hop is waited for.
        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 200), sampleRate: 16_000)
        let events = delivered.withLock { $0 }
        let stopped = try #require(events.firstIndex(where: Self.isSpeechStopped))
        let transcript = try #require(events.firstIndex(where: Match.finalTranscript))
        let started = try #require(events.firstIndex(where: Self.isResponseStarted))
        let firstAudio = try #require(events.firstIndex(where: Match.audio))
        let done = try #require(events.firstIndex(where: Match.responseDone(.completed)))
        #expect(stopped < transcript && transcript < started && started < firstAudio && firstAudio < done)
        #expect(await session.ledger.messages == [.user("What time is it?"), .assistant(text: "It is noon.")])
        await session.close()
        #expect(await session.hasRunningTasks == false)
    }

    @Test func speakingAgainDropsTheEarlyAnswerUnheard() async throws {
        let speaking = AsyncGate()
        let model = ScriptedLanguageModel(replies: [.text("It is noon."), .text("It is noon in Paris.")])
        let (session, recorder) = makeSession(
            recognizer: ScriptedSpeechRecognizer(texts: ["What time is it", "What time is it in Paris?"]), model: model,
            synthesizer: ScriptedSpeechSynthesizer(gate: speaking)
        )
        try await ScenarioAudio.ask(session)
        await speaking.waitForArrivals(1)  // the early answer to "What time is it"
        try await session.appendAudio(ScenarioAudio.speech(milliseconds: 600), sampleRate: 16_000)
        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 200), sampleRate: 16_000)
        await speaking.waitForArrivals(2)  // the early answer to the whole question
        speaking.open()
        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 300), sampleRate: 16_000)

        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        #expect(model.requests.count == 2)
        #expect(await recorder.count(Self.isResponseStarted) == 1, "the dropped answer never started for the client")
        let said = await recorder.events.compactMap { event -> String? in
            if case .agentTextDelta(_, _, let delta) = event { delta } else { nil }
        }.joined()
        #expect(said == "It is noon in Paris.")
        #expect(await session.ledger.messages == [.user("What time is it in Paris?"), .assistant(text: "It is noon in Paris.")])
        await session.close()
        #expect(await session.hasRunningTasks == false)
    }

    @Test func aFailedEarlyAnswerIsAskedAgainWhenTheTurnEnds() async throws {
        let speaking = AsyncGate()
        let asked = AsyncGate()
        let model = ScriptedLanguageModel(replies: [
            ScriptedLanguageModel.Reply([.wait(asked), .fail(ProviderError(.server, provider: "scripted", message: "down for a moment"))]),
            .text("It is noon."),
        ])
        let (session, recorder) = makeSession(
            recognizer: ScriptedSpeechRecognizer(texts: ["What time is it?"]), model: model,
            synthesizer: ScriptedSpeechSynthesizer(gate: speaking)
        )
        try await ScenarioAudio.ask(session)
        // The early answer was asked for and failed, within the silence window.
        #expect(await Self.eventually { asked.arrivalCount == 1 })
        asked.open()
        #expect(await Self.eventually { await !session.isAnsweringEarly })
        speaking.open()
        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 200), sampleRate: 16_000)
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        #expect(model.requests.count == 2)
        #expect(await recorder.count(Match.error) == 0, "the early failure is not the turn's")
        #expect(await session.ledger.messages.last == .assistant(text: "It is noon."))
    }

    @Test func onlyAutomaticResponsesOfAgentsWithoutToolsStartEarly() {
        let tool = ToolDefinition(name: "lights", description: "", parameters: .object(["type": .string("object")]))
        var tools = ToolRegistry()
        tools.register(CalculatorTool())
        let allowed = VoiceSessionConfiguration()
        #expect(SpeculativeResponse.isAllowed(by: allowed, serverTools: ToolRegistry()))
        #expect(!SpeculativeResponse.isAllowed(by: allowed, serverTools: tools))
        var variants: [VoiceSessionConfiguration] = []
        for change in [
            { (configuration: inout VoiceSessionConfiguration) in configuration.clientTools = [tool] },
            { $0.preemptiveGeneration = false },
            { $0.preemptiveTranscriptionAfterMs = nil },
            { $0.turnDetection = nil },
            { $0.turnDetection?.createResponse = false },
        ] as [(inout VoiceSessionConfiguration) -> Void] {
            var configuration = allowed
            change(&configuration)
            variants.append(configuration)
        }
        for configuration in variants {
            #expect(!SpeculativeResponse.isAllowed(by: configuration, serverTools: ToolRegistry()))
        }
    }
}
