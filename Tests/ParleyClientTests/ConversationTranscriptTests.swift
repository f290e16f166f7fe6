import Foundation
import ParleyClient
import ParleyCore
import Testing

/// The reducer of server events into entries, fed events in order, out of order and twice.
@Suite struct ConversationTranscriptTests {
    private static func position(_ itemID: String, response: String = "resp_1") -> RealtimeContentPosition {
        RealtimeContentPosition(responseID: response, itemID: itemID)
    }

    private static func partial(_ itemID: String, _ text: String) -> RealtimeServerEvent {
        .parley(type: "parley.input_transcript.partial", payload: .object(["item_id": .string(itemID), "text": .string(text)]))
    }

    private static func completed(_ itemID: String, _ text: String) -> RealtimeServerEvent {
        .inputAudioTranscriptionCompleted(itemID: itemID, contentIndex: 0, transcript: text, usage: .duration(seconds: 0))
    }

    private static func audio(_ itemID: String, milliseconds: Int, response: String = "resp_1") -> RealtimeServerEvent {
        .responseOutputAudioDelta(position(itemID, response: response), delta: PCM16Buffer(samples: [Int16](repeating: 100, count: milliseconds * 24)).base64EncodedString())
    }

    private static func agentItem(_ itemID: String, _ text: String, status: RealtimeItemStatus) -> RealtimeItem {
        .message(id: itemID, role: .assistant, content: [.outputAudio(audio: nil, transcript: text)], status: status)
    }

    private static func apply(_ events: [RealtimeServerEvent], to transcript: inout ConversationTranscript) {
        for event in events { transcript.apply(event) }
    }

    // MARK: The person's words

    @Test func spokenWordsAreReplacedAsRecognitionRefinesThemAndStayFinal() {
        var transcript = ConversationTranscript()
        let localID = transcript.addSpokenUtterance(text: "hel")
        Self.apply([
            .inputAudioBufferCommitted(itemID: "item_u", previousItemID: nil),
            Self.partial("item_u", "hello th"),
            // The standard delta repeats what the full partial already said: ignored.
            .inputAudioTranscriptionDelta(itemID: "item_u", contentIndex: 0, delta: "th"),
            Self.completed("item_u", "hello there"),
            // Late and repeated events change nothing.
            Self.partial("item_u", "stale words"),
            .inputAudioTranscriptionDelta(itemID: "item_u", contentIndex: 0, delta: " more"),
            Self.completed("item_u", "hello there"),
            .conversationItemAdded(.message(id: "item_u", role: .user, content: [.inputAudio(audio: nil, transcript: nil)]), previousItemID: nil),
            .inputAudioBufferCommitted(itemID: "item_u", previousItemID: nil),
        ], to: &transcript)
        #expect(transcript.messages == [
            ConversationMessage(id: localID, itemID: "item_u", role: .user, isSpoken: true, text: "hello there", status: .complete),
        ])
    }

    @Test func aTranscriptThatArrivesBeforeItsItemWaitsForIt() {
        var transcript = ConversationTranscript()
        transcript.apply(Self.partial("item_u", "early"))
        #expect(transcript.unplacedSpeech?.itemID == "item_u")
        #expect(transcript.unplacedSpeech?.text == "early")
        transcript.apply(Self.completed("item_u", "early words"))
        #expect(transcript.messages.isEmpty)
        transcript.addSpokenUtterance(text: "early")
        transcript.apply(.conversationItemAdded(.message(id: "item_u", role: .user, content: [.inputAudio(audio: nil, transcript: nil)]), previousItemID: nil))
        transcript.apply(.inputAudioBufferCommitted(itemID: "item_u", previousItemID: nil))
        #expect(transcript.messages.map(\.text) == ["early words"])
        #expect(transcript.messages.map(\.status) == [.complete])
        #expect(transcript.unplacedSpeech == nil)
    }

    @Test func handsFreeSpeechOpensItsOwnEntryAndAppendsStandardDeltas() {
        var transcript = ConversationTranscript()
        Self.apply([
            .inputAudioBufferCommitted(itemID: "item_u", previousItemID: nil),
            .inputAudioTranscriptionDelta(itemID: "item_u", contentIndex: 0, delta: "hel"),
            .inputAudioTranscriptionDelta(itemID: "item_u", contentIndex: 0, delta: "lo"),
        ], to: &transcript)
        #expect(transcript.messages.map(\.text) == ["hello"])
        #expect(transcript.messages.first?.id == "item_u")
        #expect(transcript.messages.first?.status == .transcribing)
        transcript.apply(Self.completed("item_u", "Hello."))
        #expect(transcript.messages.map(\.text) == ["Hello."])
    }

    @Test func speechThatTranscribesToNothingIsNoEntryAndStaysGone() {
        var transcript = ConversationTranscript()
        transcript.addSpokenUtterance(text: "")
        Self.apply([
            .inputAudioBufferCommitted(itemID: "item_u", previousItemID: nil),
            Self.completed("item_u", "  "),
            Self.partial("item_u", "ghost"),
            .inputAudioBufferCommitted(itemID: "item_u", previousItemID: nil),
        ], to: &transcript)
        #expect(transcript.messages.isEmpty)
    }

    @Test func releasedHoldsTakeTheirItemsInOrder() {
        var transcript = ConversationTranscript()
        let first = transcript.addSpokenUtterance(text: "one")
        let second = transcript.addSpokenUtterance(text: "two")
        Self.apply([
            .inputAudioBufferCommitted(itemID: "item_1", previousItemID: nil),
            .inputAudioBufferCommitted(itemID: "item_2", previousItemID: "item_1"),
            Self.completed("item_2", "second"),
            Self.completed("item_1", "first"),
        ], to: &transcript)
        #expect(transcript.messages.map(\.id) == [first, second])
        #expect(transcript.messages.map(\.text) == ["first", "second"])
    }

    @Test func failuresMarkTheEntry() {
        var transcript = ConversationTranscript()
        transcript.addSpokenUtterance(text: "lost")
        transcript.failNewestPendingUtterance()
        transcript.addSpokenUtterance(text: "")
        transcript.apply(.inputAudioBufferCommitted(itemID: "item_u", previousItemID: nil))
        transcript.apply(.inputAudioTranscriptionFailed(itemID: "item_u", contentIndex: 0, error: RealtimeProtocolError(code: "x", message: "no")))
        transcript.apply(Self.partial("item_u", "late"))
        #expect(transcript.messages.map(\.status) == [.failed, .failed])
        #expect(transcript.messages.map(\.text) == ["lost", ""])
    }

    @Test func typedMessagesAreNotRepeatedWhenTheServerEchoesThem() {
        var transcript = ConversationTranscript()
        transcript.addTypedMessage(itemID: "item_t", text: "Hi")
        let echo = RealtimeItem.message(id: "item_t", role: .user, content: [.inputText("Hi")], status: .completed)
        Self.apply([.conversationItemAdded(echo, previousItemID: nil), .conversationItemDone(echo, previousItemID: nil)], to: &transcript)
        // A message typed elsewhere (another client of the same instance) shows too.
        transcript.apply(.conversationItemAdded(.message(id: "item_o", role: .user, content: [.inputText("From the web")]), previousItemID: nil))
        #expect(transcript.messages.map(\.text) == ["Hi", "From the web"])
        #expect(transcript.messages.allSatisfy { !$0.isSpoken && $0.status == .complete })
    }

    // MARK: The agent's words

    @Test func agentWordsAppendByItemWhateverOrderTheyArriveIn() {
        var transcript = ConversationTranscript()
        let item = RealtimeItem.message(id: "item_a", role: .assistant, content: [], status: .inProgress)
        Self.apply([
            .responseCreated(RealtimeResponse(id: "resp_1", status: .inProgress)),
            // A delta before the item was announced opens the entry.
            .responseOutputAudioTranscriptDelta(Self.position("item_a"), delta: "Hello"),
            .responseOutputItemAdded(responseID: "resp_1", outputIndex: 0, item: item),
            .conversationItemAdded(item, previousItemID: nil),
            .responseOutputItemAdded(responseID: "resp_1", outputIndex: 0, item: item),
            .responseOutputAudioTranscriptDelta(Self.position("item_a"), delta: " from"),
        ], to: &transcript)
        #expect(transcript.messages.map(\.text) == ["Hello from"])
        #expect(transcript.messages.first?.status == .streaming)
        #expect(transcript.messages.first?.isSpoken == true)
        #expect(transcript.messages.first?.responseID == "resp_1")
        Self.apply([
            .responseOutputAudioTranscriptDone(Self.position("item_a"), transcript: "Hello from Parley."),
            .responseOutputItemDone(responseID: "resp_1", outputIndex: 0, item: Self.agentItem("item_a", "Hello from Parley.", status: .completed)),
            .responseOutputAudioTranscriptDelta(Self.position("item_a"), delta: " late"),
            .conversationItemDone(Self.agentItem("item_a", "Hello from Parley.", status: .completed), previousItemID: nil),
            .responseDone(RealtimeResponse(id: "resp_1", status: .completed)),
        ], to: &transcript)
        #expect(transcript.messages == [
            ConversationMessage(id: "item_a", itemID: "item_a", role: .agent, isSpoken: true, text: "Hello from Parley.", status: .complete, responseID: "resp_1"),
        ])
    }

    @Test func textAnswersAreWrittenNotSpoken() {
        var transcript = ConversationTranscript()
        transcript.apply(.responseOutputTextDelta(Self.position("item_a"), delta: "Written"))
        transcript.apply(.responseOutputTextDone(Self.position("item_a"), text: "Written answer"))
        transcript.apply(.responseDone(RealtimeResponse(id: "resp_1", status: .completed, outputModalities: [.text])))
        #expect(transcript.messages.map(\.text) == ["Written answer"])
        #expect(transcript.messages.first?.isSpoken == false)
        #expect(transcript.messages.first?.status == .complete)
    }

    @Test func anInterruptedAnswerKeepsWhatWasHeardAndOnlyGetsShorter() {
        var transcript = ConversationTranscript()
        Self.apply([
            .responseOutputAudioTranscriptDelta(Self.position("item_a"), delta: "First sentence. "),
            Self.audio("item_a", milliseconds: 1000),
            .responseOutputAudioTranscriptDelta(Self.position("item_a"), delta: "Second sentence. "),
            Self.audio("item_a", milliseconds: 1000),
            .responseOutputAudioTranscriptDelta(Self.position("item_a"), delta: "Third sentence. "),
            Self.audio("item_a", milliseconds: 1000),
        ], to: &transcript)
        // 1.5 s played: the second chunk had started, with two sentences of text.
        transcript.interrupt(responseID: "resp_1", playback: PlaybackPosition(itemID: "item_a", playedMilliseconds: 1500))
        #expect(transcript.messages.map(\.text) == ["First sentence. Second sentence. "])
        #expect(transcript.messages.first?.status == .interrupted)
        #expect(transcript.isDiscarded(responseID: "resp_1"))
        Self.apply([
            .responseOutputAudioTranscriptDelta(Self.position("item_a"), delta: "Fourth sentence. "),
            Self.audio("item_a", milliseconds: 1000),
            // What the server had sent is longer than what was heard: ignored.
            .responseOutputAudioTranscriptDone(Self.position("item_a"), transcript: "First sentence. Second sentence. Third sentence. Fourth sentence. "),
            .responseOutputItemDone(responseID: "resp_1", outputIndex: 0, item: Self.agentItem("item_a", "First sentence. Second sentence. Third sentence. ", status: .incomplete)),
            .responseDone(RealtimeResponse(id: "resp_1", status: .cancelled)),
            .conversationItemTruncated(itemID: "item_a", contentIndex: 0, audioEndMs: 1500),
        ], to: &transcript)
        #expect(transcript.messages.map(\.text) == ["First sentence. Second sentence. "])
        // The server's own, shorter account of what was heard is taken.
        transcript.apply(.conversationItemDone(Self.agentItem("item_a", "First sentence. Second", status: .incomplete), previousItemID: nil))
        #expect(transcript.messages.map(\.text) == ["First sentence. Second"])
        #expect(transcript.messages.first?.status == .interrupted)
    }

    @Test func anAnswerInterruptedBeforeAnyOfItWasHeardIsRemovedForGood() {
        var transcript = ConversationTranscript()
        Self.apply([
            .responseOutputAudioTranscriptDelta(Self.position("item_a"), delta: "Never heard."),
            Self.audio("item_a", milliseconds: 500),
        ], to: &transcript)
        transcript.interrupt(responseID: "resp_1", playback: PlaybackPosition(itemID: "item_a", playedMilliseconds: 0))
        #expect(transcript.messages.isEmpty)
        Self.apply([
            .responseOutputAudioTranscriptDelta(Self.position("item_a"), delta: " Still not."),
            .responseOutputItemDone(responseID: "resp_1", outputIndex: 0, item: Self.agentItem("item_a", "Never heard.", status: .incomplete)),
            .conversationItemDone(Self.agentItem("item_a", "Never heard.", status: .incomplete), previousItemID: nil),
            // A later response of the same turn is not affected.
            .responseOutputAudioTranscriptDelta(Self.position("item_b", response: "resp_2"), delta: "Next answer."),
        ], to: &transcript)
        #expect(transcript.messages.map(\.id) == ["item_b"])
    }

    @Test func aServerSideBargeInCutsTheAnswerToo() {
        var transcript = ConversationTranscript()
        Self.apply([
            .responseOutputAudioTranscriptDelta(Self.position("item_a"), delta: "One. "),
            Self.audio("item_a", milliseconds: 800),
            .responseOutputAudioTranscriptDelta(Self.position("item_a"), delta: "Two. "),
            Self.audio("item_a", milliseconds: 800),
            .conversationItemTruncated(itemID: "item_a", contentIndex: 0, audioEndMs: 500),
        ], to: &transcript)
        #expect(transcript.messages.map(\.text) == ["One. "])
        #expect(transcript.messages.first?.status == .interrupted)
    }

    @Test func cancellingAResponseThatHadNotSpokenKeepsOnlyWrittenText() {
        var transcript = ConversationTranscript()
        transcript.apply(.responseOutputTextDelta(Self.position("item_w"), delta: "Written so far"))
        transcript.apply(.responseOutputAudioTranscriptDelta(Self.position("item_s", response: "resp_2"), delta: "Spoken but unheard"))
        transcript.interrupt(responseID: "resp_1", playback: nil)
        transcript.interrupt(responseID: "resp_2", playback: nil)
        #expect(transcript.messages.map(\.text) == ["Written so far"])
        #expect(transcript.messages.first?.status == .interrupted)
    }

    @Test func aFailedResponseEndsItsEntries() {
        var transcript = ConversationTranscript()
        transcript.apply(.responseOutputAudioTranscriptDelta(Self.position("item_a"), delta: "Partial"))
        transcript.apply(.responseOutputItemAdded(responseID: "resp_2", outputIndex: 0, item: .message(id: "item_b", role: .assistant, content: [])))
        transcript.apply(.responseDone(RealtimeResponse(id: "resp_1", status: .failed)))
        transcript.apply(.responseDone(RealtimeResponse(id: "resp_2", status: .failed)))
        #expect(transcript.messages.map(\.text) == ["Partial"])
        #expect(transcript.messages.first?.status == .interrupted)
    }

    // MARK: Tools, deletion, lost sessions

    @Test func toolCallsShowWhileTheyRun() {
        var transcript = ConversationTranscript()
        let started = RealtimeServerEvent.parley(type: "parley.tool_call.started", payload: .object([
            "response_id": .string("resp_1"), "call_id": .string("call_1"), "name": .string("get_weather"),
        ]))
        let finished = RealtimeServerEvent.parley(type: "parley.tool_call.finished", payload: .object([
            "response_id": .string("resp_1"), "call_id": .string("call_1"), "name": .string("get_weather"), "is_error": .bool(true),
        ]))
        transcript.apply(started)
        transcript.apply(started)
        #expect(transcript.messages.map(\.status) == [.streaming])
        transcript.apply(finished)
        transcript.apply(.parley(type: "parley.turn_metrics", payload: .object([:])))
        #expect(transcript.messages == [
            ConversationMessage(id: "tool-call_1", itemID: nil, role: .tool, isSpoken: false, text: "get_weather", status: .failed, responseID: "resp_1"),
        ])
    }

    @Test func deletedItemsLeaveAndDoNotComeBack() {
        var transcript = ConversationTranscript()
        transcript.addTypedMessage(itemID: "item_t", text: "Oops")
        transcript.apply(.conversationItemDeleted(itemID: "item_t"))
        transcript.apply(.conversationItemAdded(.message(id: "item_t", role: .user, content: [.inputText("Oops")]), previousItemID: nil))
        #expect(transcript.messages.isEmpty)
    }

    @Test func aLostSessionSettlesWhateverWasInProgress() {
        var transcript = ConversationTranscript()
        transcript.addSpokenUtterance(text: "")
        transcript.addSpokenUtterance(text: "half a sent")
        transcript.apply(.responseOutputAudioTranscriptDelta(Self.position("item_a"), delta: "Cut off"))
        transcript.sessionEnded()
        #expect(transcript.messages.map(\.text) == ["half a sent", "Cut off"])
        #expect(transcript.messages.map(\.status) == [.complete, .interrupted])
        // The next session's first commit opens a fresh entry.
        transcript.apply(.inputAudioBufferCommitted(itemID: "item_n", previousItemID: nil))
        #expect(transcript.messages.last?.id == "item_n")
    }
}
