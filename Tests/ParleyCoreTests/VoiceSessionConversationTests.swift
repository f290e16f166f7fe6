import Foundation
import ParleyTesting
import Testing
@testable import ParleyCore

/// How a session keeps its conversation in the order its client was told, and what a
/// response request may change: the guarantees realtime clients build their own copy on.
@Suite struct VoiceSessionConversationTests {
    @Test func everyOutputItemNamesTheItemBeforeIt() async throws {
        var configuration = VoiceSessionConfiguration()
        configuration.clientTools = [ToolDefinition(name: "open_door", description: "Opens the door", parameters: .object(["type": .string("object")]))]
        let model = ScriptedLanguageModel(replies: [
            .toolCalls([ToolCall(id: "call_1", name: "open_door", arguments: "{}"), ToolCall(id: "call_2", name: "open_door", arguments: "{}")], text: "Opening."),
        ])
        let (session, recorder) = makeSession(model: model, configuration: configuration)
        let userID = await session.addItem(.user("Open both doors"))
        await session.createResponse()
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        let events = await recorder.events
        let messageStart = events.compactMap { event -> (String, String?)? in
            if case .outputItemStarted(_, let itemID, _, let previous) = event { (itemID, previous) } else { nil }
        }
        let calls = events.compactMap { event -> (String, String?)? in
            if case .functionCallRequested(_, let itemID, _, let previous) = event { (itemID, previous) } else { nil }
        }
        try #require(messageStart.count == 1 && calls.count == 2)
        #expect(messageStart[0].1 == userID)
        #expect(calls[0].1 == messageStart[0].0)
        #expect(calls[1].1 == calls[0].0)
        let ids = await session.ledger.items.map(\.id)
        #expect(ids == [userID, messageStart[0].0, calls[0].0, calls[1].0])
        // A client answering the second call after it, by its id, is understood.
        await session.addItem(.tool(callID: "call_2", content: "open"), placement: .after(calls[1].0))
        #expect(await session.ledger.contains(id: calls[1].0))
    }

    @Test func theRequestsOfAConversationPairEachCallWithItsResult() {
        let history: [ChatMessage] = [
            .user("Open both doors"),
            .assistant(text: "Opening."),
            .assistant(text: "", toolCalls: [ToolCall(id: "call_1", name: "open_door", arguments: "{}")]),
            .assistant(text: "", toolCalls: [ToolCall(id: "call_2", name: "open_door", arguments: "{}")]),
            .tool(callID: "call_1", content: "open"),
            .tool(callID: "call_2", content: "open"),
        ]
        let messages = ConversationWindow().messages(instructions: "", history: history)
        #expect(messages == [
            .user("Open both doors"),
            .assistant(text: "Opening.", toolCalls: [
                ToolCall(id: "call_1", name: "open_door", arguments: "{}"), ToolCall(id: "call_2", name: "open_door", arguments: "{}"),
            ]),
            .tool(callID: "call_1", content: "open"),
            .tool(callID: "call_2", content: "open"),
        ])
    }

    @Test func aCommittedTurnKeepsItsPlaceWhileItIsTranscribed() async throws {
        let gate = AsyncGate()
        let recognizer = ScriptedSpeechRecognizer(results: [.success("Spoken first")], gate: gate)
        var configuration = VoiceSessionConfiguration()
        configuration.turnDetection = nil
        let (session, recorder) = makeSession(recognizer: recognizer, model: ScriptedLanguageModel(replies: []), configuration: configuration)
        try await session.appendAudio(ScenarioAudio.speech(milliseconds: 500), sampleRate: 16_000)
        try await session.commitAudio()
        let typedID = await session.addItem(.user("Typed second"))
        gate.open()
        #expect(await recorder.waitFor(Match.finalTranscript))
        #expect(await session.ledger.messages == [.user("Spoken first"), .user("Typed second")])
        #expect(await session.ledger.previousItemID(before: typedID) == session.ledger.items.first?.id)
    }

    @Test func truncatingTheReplyBeingSpokenCutsItsRecordButLetsItFinish() async throws {
        // 200 ms per word: "One two three." is 600 ms, "Four five six." the next 600 ms.
        let gate = AsyncGate()
        let model = ScriptedLanguageModel(replies: [ScriptedLanguageModel.Reply([.text("One two three. Four"), .wait(gate), .text(" five six.")])])
        let (session, recorder) = makeSession(model: model)
        await session.addItem(.user("count"))
        await session.createResponse()
        #expect(await recorder.waitFor(Match.audio))
        let itemID = try #require(await recorder.events.compactMap { event -> String? in
            if case .outputItemStarted(_, let itemID, _, _) = event { itemID } else { nil }
        }.first)
        #expect(await session.truncate(itemID: itemID, audioEndMs: 300))
        #expect(await recorder.waitFor(Match.truncated))
        #expect(await session.hasActiveResponse)
        gate.open()
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        #expect(await session.ledger.messages.last == .assistant(text: "One", toolCalls: [], interrupted: true))
    }

    @Test func anOutOfBandResponseLeavesTheConversationAlone() async throws {
        let model = ScriptedLanguageModel(replies: [.text("positive")])
        let (session, recorder) = makeSession(model: model)
        await session.addItem(.user("I love it"))
        let before = await session.ledger.items
        var request = ResponseRequest(instructions: "Classify the sentiment.", speaks: false, metadata: ["purpose": "sentiment"])
        request.isOutOfBand = true
        request.input = [.user("Rate this: I love it")]
        await session.createResponse(request)
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        #expect(await session.ledger.items == before)
        #expect(model.requests.first?.messages.last == .user("Rate this: I love it"))
        #expect(await recorder.count(Match.audio) == 0)
        #expect(await recorder.count { if case .itemCompleted = $0 { true } else { false } } == 1)
        #expect(await session.firstAudioSummary == nil)
    }

    @Test func theToolChoiceOfTheSessionAndOfAResponseReachTheModel() async throws {
        var configuration = VoiceSessionConfiguration()
        let tool = ToolDefinition(name: "get_weather", description: "Weather", parameters: .object(["type": .string("object")]))
        configuration.clientTools = [tool]
        configuration.toolChoice = .required
        let model = ScriptedLanguageModel(replies: [], fallback: .text("Fine."))
        let (session, recorder) = makeSession(model: model, configuration: configuration)
        await session.addItem(.user("Hello"))
        await session.createResponse()
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        await session.createResponse(ResponseRequest(toolChoice: .function("get_weather")))
        #expect(await recorder.waitFor(Match.responseDone(.completed), count: 2))
        await session.createResponse(ResponseRequest(maxOutputTokens: .limited(7), clientTools: [], toolChoice: ToolChoice.none))
        #expect(await recorder.waitFor(Match.responseDone(.completed), count: 3))
        let requests = model.requests
        try #require(requests.count == 3)
        #expect(requests[0].toolChoice == .required)
        #expect(requests[1].toolChoice == .function("get_weather"))
        #expect(requests[2].tools.isEmpty && requests[2].toolChoice == nil && requests[2].maxTokens == 7)
    }

    @Test func silenceAfterTheReplyTriggersTheIdleTimeoutOnce() async throws {
        var configuration = VoiceSessionConfiguration()
        configuration.turnDetection?.idleTimeoutMs = 1_000
        let model = ScriptedLanguageModel(replies: [], fallback: .text("Are you still there?"))
        let (session, recorder) = makeSession(model: model, configuration: configuration)
        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 1_500), sampleRate: 16_000)
        #expect(await recorder.waitFor { if case .idleTimeout = $0 { true } else { false } })
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        #expect(model.requests.first?.messages.first.map { if case .system(let text) = $0 { text.contains("said nothing") } else { false } } == true)
        #expect(await recorder.count { if case .idleTimeout = $0 { true } else { false } } == 1)
        #expect(await recorder.count { if case .inputCommitted = $0 { true } else { false } } == 1)
    }
}
