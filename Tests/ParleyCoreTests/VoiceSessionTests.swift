import Foundation
import ParleyCore
import ParleyTesting
import Testing

/// Scenario tests of the voice session with scripted providers: no sleeps, every wait has a deadline.
@Suite struct VoiceSessionTests {
    /// 300 ms of silence, 800 ms of speech, 700 ms of silence: one turn for the server VAD.
    func speakOneTurn(into session: VoiceSession) async throws {
        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 300), sampleRate: 16_000)
        try await session.appendAudio(ScenarioAudio.speech(milliseconds: 800), sampleRate: 16_000)
        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 700), sampleRate: 16_000)
    }

    @Test func voiceTurnStreamsTranscriptTextAndAudioInOrder() async throws {
        let model = ScriptedLanguageModel(replies: [.text("It is noon. Have a nice lunch.")])
        let synthesizer = ScriptedSpeechSynthesizer()
        let (session, recorder) = makeSession(model: model, synthesizer: synthesizer)
        try await speakOneTurn(into: session)

        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        let events = await recorder.events
        let kinds = events.map(EventKind.init)
        let order: [EventKind] = [.speechStarted, .speechStopped, .inputCommitted, .userTranscriptFinal, .responseStarted, .agentTextDelta, .agentAudio, .responseDone]
        #expect(kinds.isSubsequence(order), "events: \(kinds)")
        #expect(synthesizer.texts == ["It is noon.", "Have a nice lunch."])
        let ledger = await session.ledger.messages
        #expect(ledger == [.user("What time is it?"), .assistant(text: "It is noon. Have a nice lunch.", toolCalls: [], interrupted: false)])
        #expect(model.requests.first?.messages.last == .user("What time is it?"))
        let metrics = await session.metricsHistory
        #expect(metrics.count == 1 && metrics[0].firstAudioMs != nil && metrics[0].transcriptionMs != nil)
        // The stages come in pipeline order: first token, first chunk to synthesis, first audio.
        let stages = try #require(metrics.first.flatMap { turn in
            turn.firstTokenMs.flatMap { token in turn.firstSynthesisMs.flatMap { synthesis in turn.firstAudioMs.map { (token, synthesis, $0) } } }
        })
        #expect(stages.0 <= stages.1 && stages.1 <= stages.2)
    }

    @Test func audioChunksAreBetween20And100Milliseconds() async throws {
        let (session, recorder) = makeSession(model: ScriptedLanguageModel(replies: [.text("One two three four five six seven eight.")]))
        await session.addItem(.user("Count"))
        await session.createResponse()
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        let chunks = await recorder.events.compactMap { event -> Int? in
            if case .agentAudio(_, _, let samples) = event { samples.count } else { nil }
        }
        let last = try #require(chunks.last)
        #expect(chunks.dropLast().allSatisfy { $0 == 24 * 40 })
        #expect(last > 0 && last <= 24 * 100)
    }

    @Test func textTurnGetsASpokenAnswer() async throws {
        let (session, recorder) = makeSession(model: ScriptedLanguageModel(replies: [.text("Hello to you too.")]))
        await session.addItem(.user("Hello"))
        await session.createResponse()
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        #expect(await recorder.count(Match.audio) > 0)
        #expect(await session.ledger.messages.count == 2)
    }

    @Test func quickTapWithNoAudioIsAnErrorNotATurn() async throws {
        var configuration = VoiceSessionConfiguration()
        configuration.turnDetection = nil
        let model = ScriptedLanguageModel(replies: [])
        let (session, recorder) = makeSession(model: model, configuration: configuration)
        try await session.appendAudio(ScenarioAudio.speech(milliseconds: 40), sampleRate: 16_000)
        await #expect(throws: SessionError.self) { try await session.commitAudio(createResponse: true) }
        #expect(await recorder.count(Match.responseStarted) == 0)
        #expect(await recorder.count { if case .inputCommitted = $0 { true } else { false } } == 0)
        #expect(model.requests.isEmpty)
        // The session goes on: a real hold after the tap is a turn.
        let recognizerTurn = ScenarioAudio.speech(milliseconds: 500)
        try await session.appendAudio(recognizerTurn, sampleRate: 16_000)
        try await session.commitAudio(createResponse: false)
        #expect(await recorder.waitFor(Match.finalTranscript))
    }

    @Test func aResponseAskedForRightAfterACommitWaitsForTheTranscript() async throws {
        var configuration = VoiceSessionConfiguration()
        configuration.turnDetection = nil
        let gate = AsyncGate()
        let recognizer = ScriptedSpeechRecognizer(results: [.success("Tell me a long story")], gate: gate)
        let model = ScriptedLanguageModel(replies: [.text("Once upon a time.")])
        let (session, recorder) = makeSession(recognizer: recognizer, model: model, configuration: configuration)
        try await session.appendAudio(ScenarioAudio.speech(milliseconds: 1_000), sampleRate: 16_000)
        try await session.commitAudio()
        await session.createResponse()
        #expect(await session.hasActiveResponse)
        gate.open()
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        #expect(model.requests.first?.messages.last == .user("Tell me a long story"))
    }

    @Test func aFullPushToTalkBufferRefusesMoreAudioButKeepsWhatItHas() async throws {
        var configuration = VoiceSessionConfiguration()
        configuration.turnDetection = nil
        configuration.maximumInputBufferMs = 1000
        let recognizer = ScriptedSpeechRecognizer(texts: ["kept"])
        let (session, recorder) = makeSession(recognizer: recognizer, model: ScriptedLanguageModel(replies: []), configuration: configuration)
        try await session.appendAudio(ScenarioAudio.speech(milliseconds: 800), sampleRate: 16_000)
        await #expect(throws: SessionError.self) { try await session.appendAudio(ScenarioAudio.speech(milliseconds: 400), sampleRate: 16_000) }
        try await session.commitAudio()
        #expect(await recorder.waitFor(Match.finalTranscript))
        #expect(recognizer.finalUtteranceSampleCounts == [16 * 800])
    }

    @Test func pushToTalkCommitsTheWholeHoldWithoutCuttingEarly() async throws {
        var configuration = VoiceSessionConfiguration()
        configuration.turnDetection = nil
        let recognizer = ScriptedSpeechRecognizer(texts: ["Tell me a joke"])
        let (session, recorder) = makeSession(recognizer: recognizer, model: ScriptedLanguageModel(replies: [.text("Why not.")]), configuration: configuration)
        // Long pauses inside the hold do not end the turn in manual mode.
        try await session.appendAudio(ScenarioAudio.speech(milliseconds: 500), sampleRate: 16_000)
        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 1500), sampleRate: 16_000)
        try await session.appendAudio(ScenarioAudio.speech(milliseconds: 500), sampleRate: 16_000)
        try await session.commitAudio(createResponse: true)
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        #expect(recognizer.finalUtteranceSampleCounts == [16 * 2500])
        #expect(await recorder.count { if case .speechStarted = $0 { true } else { false } } == 0)
    }

    @Test func bargeInDuringLanguageModelStreamingCancelsAndKeepsWhatWasHeard() async throws {
        let model = ScriptedLanguageModel(replies: [ScriptedLanguageModel.Reply([.text("Sure, here goes. "), .text("The first part"), .hang])])
        let (session, recorder) = makeSession(model: model)
        try await speakOneTurn(into: session)
        #expect(await recorder.waitFor(Match.audio))
        // The user talks over the agent for a second while its audio plays: longer than any backchannel.
        try await session.appendAudio(ScenarioAudio.speech(milliseconds: 1_000), sampleRate: 16_000)
        #expect(await recorder.waitFor(Match.responseDone(.cancelled)))
        // The session cuts its own record; `truncated` answers only a client's truncate.
        #expect(await recorder.count(Match.truncated) == 0)
        let stored = await session.ledger.messages.last
        guard case .assistant(let text, _, let interrupted)? = stored else {
            Issue.record("expected the interrupted assistant message, got \(String(describing: stored))")
            return
        }
        #expect(interrupted)
        #expect("Sure, here goes.".hasPrefix(text) || text.isEmpty)
        #expect(await eventually { model.cancelledStreams == 1 })
    }

    @Test func bargeInWhileSpeechIsBeingSynthesisedCancels() async throws {
        let gate = AsyncGate()
        let synthesizer = ScriptedSpeechSynthesizer(gate: gate)
        let model = ScriptedLanguageModel(replies: [.text("A long answer that takes a while to say.")])
        let (session, recorder) = makeSession(model: model, synthesizer: synthesizer)
        try await speakOneTurn(into: session)
        await gate.waitForArrivals(1)
        try await session.appendAudio(ScenarioAudio.speech(milliseconds: 1_000), sampleRate: 16_000)
        #expect(await recorder.waitFor(Match.responseDone(.cancelled)))
        #expect(await recorder.count(Match.audio) == 0)
    }

    @Test func bargeInDuringACancellableToolCallCancelsTheTool() async throws {
        let gate = AsyncGate()
        let tool = GatedTool(gate: gate, isCancellable: true)
        let model = ScriptedLanguageModel(replies: [.toolCalls([ToolCall(id: "call_1", name: "slow_lookup", arguments: "{}")])])
        let (session, recorder) = makeSession(model: model, tools: ToolRegistry([tool]))
        try await speakOneTurn(into: session)
        #expect(await recorder.waitFor(Match.toolStarted))
        await gate.waitForArrivals(1)
        try await session.appendAudio(ScenarioAudio.speech(milliseconds: 1_000), sampleRate: 16_000)
        #expect(await recorder.waitFor(Match.responseDone(.cancelled)))
        #expect(await eventually { tool.cancellations == 1 })
    }

    @Test func recognizerFailureIsAnErrorAndTheNextTurnWorks() async throws {
        let recognizer = ScriptedSpeechRecognizer(results: [
            .failure(ProviderError(.server, provider: "scripted-asr", message: "the recognizer crashed")),
            .success("Second try"),
        ])
        let (session, recorder) = makeSession(recognizer: recognizer, model: ScriptedLanguageModel(replies: [.text("Got it.")]))
        try await speakOneTurn(into: session)
        #expect(await recorder.waitFor { if case .userTranscriptFailed = $0 { true } else { false } })
        #expect(await recorder.count(Match.responseStarted) == 0)
        try await speakOneTurn(into: session)
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
    }

    @Test func languageModelFailureFailsTheResponseAndTheNextTurnWorks() async throws {
        let model = ScriptedLanguageModel(replies: [
            .failure(ProviderError(.rateLimited, provider: "scripted-llm", message: "slow down")),
            .text("Fine now."),
        ])
        let (session, recorder) = makeSession(recognizer: ScriptedSpeechRecognizer(texts: ["one", "two"]), model: model)
        try await speakOneTurn(into: session)
        #expect(await recorder.waitFor(Match.responseDone(.failed)))
        let failure = await recorder.events.compactMap { event -> SessionError? in
            if case .responseDone(_, .failed, let error, _) = event { error } else { nil }
        }.first
        #expect(failure?.category == .rateLimited)
        try await speakOneTurn(into: session)
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
    }

    @Test func synthesizerFailureFailsTheResponseAndTheNextTurnWorks() async throws {
        let synthesizer = ScriptedSpeechSynthesizer(failures: [ProviderError(.connectivity, provider: "scripted-tts", message: "unreachable")])
        let model = ScriptedLanguageModel(replies: [.text("First."), .text("Second.")])
        let (session, recorder) = makeSession(model: model, synthesizer: synthesizer)
        await session.addItem(.user("one"))
        await session.createResponse()
        #expect(await recorder.waitFor(Match.responseDone(.failed)))
        await session.addItem(.user("two"))
        await session.createResponse()
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
    }

    @Test func truncateCutsTheStoredReplyToTheAudioHeard() async throws {
        // 200 ms per word: "One two three." is 600 ms, "Four five six." the next 600 ms.
        let model = ScriptedLanguageModel(replies: [.text("One two three. Four five six.")])
        let (session, recorder) = makeSession(model: model)
        await session.addItem(.user("count"))
        await session.createResponse()
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        let itemID = try #require(await session.ledger.items.last).id
        #expect(await session.truncate(itemID: itemID, audioEndMs: 900))
        let stored = await session.ledger.messages.last
        #expect(stored == .assistant(text: "One two three. Four", toolCalls: [], interrupted: true))
        #expect(await session.truncate(itemID: "item_unknown", audioEndMs: 10) == false)
    }

    @Test func switchingToManualModeMidSessionStopsTheTurnDetector() async throws {
        let (session, recorder) = makeSession(recognizer: ScriptedSpeechRecognizer(texts: ["manual words"]), model: ScriptedLanguageModel(replies: [.text("Okay.")]))
        var manual = await session.configuration
        manual.turnDetection = nil
        await session.update(configuration: manual)
        try await speakOneTurn(into: session)
        #expect(await recorder.count { if case .speechStarted = $0 { true } else { false } } == 0)
        try await session.commitAudio(createResponse: true)
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        #expect(await session.ledger.messages.first == .user("manual words"))
    }

    @Test func clientToolCallsEndTheResponseAndComeBackAsItems() async throws {
        var configuration = VoiceSessionConfiguration()
        configuration.clientTools = [ToolDefinition(name: "open_door", description: "Opens the door", parameters: .object(["type": .string("object")]))]
        let model = ScriptedLanguageModel(replies: [
            .toolCalls([ToolCall(id: "call_9", name: "open_door", arguments: "{}")]),
            .text("The door is open."),
        ])
        let (session, recorder) = makeSession(model: model, configuration: configuration)
        await session.addItem(.user("Open the door"))
        await session.createResponse()
        #expect(await recorder.waitFor { if case .functionCallRequested = $0 { true } else { false } })
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        await session.addItem(.tool(callID: "call_9", content: "done"))
        await session.createResponse()
        #expect(await recorder.waitFor(Match.responseDone(.completed), count: 2))
        #expect(model.requests.last?.messages.contains(.tool(callID: "call_9", content: "done")) == true)
    }

    @Test func aHundredTurnsLeaveNoTasksAndBoundedState() async throws {
        let model = ScriptedLanguageModel(replies: [], fallback: .text("Yes."))
        let (session, recorder) = makeSession(model: model)
        for turn in 1...100 {
            await session.addItem(.user("Turn \(turn)"))
            await session.createResponse()
            // Stops at the first turn that does not complete: every later count would miss too.
            try #require(await recorder.waitFor(Match.responseDone(.completed), count: turn), "turn \(turn)")
        }
        // The last response's task returns just after its `response.done`.
        #expect(await eventually { await !session.hasRunningTasks })
        #expect(await session.ledger.items.count == 200)
        await session.close()
        #expect(await recorder.wait { _ in true })
    }

    @Test func closingReturnsOnceEveryTaskTheSessionStartedHasEnded() async throws {
        let gate = AsyncGate()  // never opened: only cancellation lets a transcription through
        let recognizer = ScriptedSpeechRecognizer(results: [.success("What time is it?")], gate: gate)
        let (session, _) = makeSession(recognizer: recognizer, model: ScriptedLanguageModel(replies: [.text("Noon.")]))
        try await ScenarioAudio.ask(session)
        await gate.waitForArrivals(1)  // the early transcription, and the wait to answer its transcript
        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 200), sampleRate: 16_000)  // the turn's, awaiting it
        #expect(await session.hasRunningTasks)
        await session.close()
        #expect(await !session.hasRunningTasks, "no task outlives close()")
    }

    @Test func closingCancelsTheResponseInProgress() async throws {
        let model = ScriptedLanguageModel(replies: [ScriptedLanguageModel.Reply([.text("Hanging on"), .hang])])
        let (session, recorder) = makeSession(model: model)
        await session.addItem(.user("hi"))
        await session.createResponse()
        #expect(await recorder.waitFor(Match.textDelta))
        await session.close()
        #expect(await recorder.waitFor(Match.responseDone(.cancelled)))
        #expect(await eventually { model.cancelledStreams == 1 })
        #expect(await session.hasRunningTasks == false)
    }
}

/// A server tool that waits at a gate and counts its calls and cancellations.
final class GatedTool: Tool, @unchecked Sendable {
    // @unchecked Sendable: `cancelled` and `called` are guarded by `lock`.
    private let lock = NSLock()
    private var cancelled = 0
    private var called = 0
    let gate: AsyncGate
    let isCancellable: Bool
    let name = "slow_lookup"
    let description = "Looks something up slowly"
    let parameters: JSONValue = .object(["type": .string("object"), "properties": .object([:])])

    init(gate: AsyncGate, isCancellable: Bool = false) {
        self.gate = gate
        self.isCancellable = isCancellable
    }

    var cancellations: Int { lock.withLock { cancelled } }
    var calls: Int { lock.withLock { called } }

    func call(arguments: JSONValue) async throws -> String {
        lock.withLock { called += 1 }
        await gate.wait()
        if Task.isCancelled { lock.withLock { cancelled += 1 } }
        try Task.checkCancellation()
        return "found"
    }
}

/// The kind of a session event, for order checks.
enum EventKind: Equatable {
    case speechStarted, speechStopped, turnJudged, inputCommitted, inputCleared, idleTimeout, userTranscriptPartial, userTranscriptFinal
    case userTranscriptFailed, itemAdded, itemCompleted, itemDeleted, itemTruncated, responseStarted, outputItemStarted
    case agentTextDelta, agentAudio, outputItemDone, toolCallStarted, toolCallFinished, functionCallRequested
    case responseDone, error, turnMetrics, outputAudioPaused, outputAudioResumed, interruptionDecided, agentHandoff

    init(_ event: VoiceSessionEvent) {
        self = switch event {
        case .speechStarted: .speechStarted
        case .speechStopped: .speechStopped
        case .turnJudged: .turnJudged
        case .inputCommitted: .inputCommitted
        case .inputCleared: .inputCleared
        case .idleTimeout: .idleTimeout
        case .userTranscriptPartial: .userTranscriptPartial
        case .userTranscriptFinal: .userTranscriptFinal
        case .userTranscriptFailed: .userTranscriptFailed
        case .itemAdded: .itemAdded
        case .itemCompleted: .itemCompleted
        case .itemDeleted: .itemDeleted
        case .itemTruncated: .itemTruncated
        case .responseStarted: .responseStarted
        case .outputItemStarted: .outputItemStarted
        case .agentTextDelta: .agentTextDelta
        case .agentAudio: .agentAudio
        case .outputItemDone: .outputItemDone
        case .toolCallStarted: .toolCallStarted
        case .toolCallFinished: .toolCallFinished
        case .functionCallRequested: .functionCallRequested
        case .responseDone: .responseDone
        case .error: .error
        case .turnMetrics: .turnMetrics
        case .outputAudioPaused: .outputAudioPaused
        case .outputAudioResumed: .outputAudioResumed
        case .interruptionDecided: .interruptionDecided
        case .agentHandoff: .agentHandoff
        }
    }
}

extension Array where Element == EventKind {
    /// Whether `order` appears in this array in order (not necessarily adjacent).
    func isSubsequence(_ order: [EventKind]) -> Bool {
        var remaining = order[...]
        for kind in self where kind == remaining.first { remaining = remaining.dropFirst() }
        return remaining.isEmpty
    }
}
