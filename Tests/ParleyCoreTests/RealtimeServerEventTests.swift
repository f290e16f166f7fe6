import Foundation
import Testing
@testable import ParleyCore

@Suite struct RealtimeServerEventTests {
    @Test(arguments: RealtimeDialect.allCases)
    func everyServerEventRoundTrips(dialect: RealtimeDialect) throws {
        for event in RealtimeSamples.serverEvents(dialect: dialect) {
            guard let text = event.encode(dialect: dialect) else { continue }
            let decoded = try RealtimeServerEvent.decode(text)
            #expect(decoded == Self.expectedAfterRoundTrip(event, dialect: dialect), "\(text)")
        }
    }

    /// What survives a trip through `dialect`: beta has no function name in
    /// `function_call_arguments.done` and no VAD idle timeout, and the session's model and
    /// temperature live in one dialect each.
    static func expectedAfterRoundTrip(_ event: RealtimeServerEvent, dialect: RealtimeDialect) -> RealtimeServerEvent {
        switch event {
        case .responseFunctionCallArgumentsDone(let responseID, let itemID, let outputIndex, let callID, _, let arguments)
            where dialect == .beta:
            return .responseFunctionCallArgumentsDone(
                responseID: responseID, itemID: itemID, outputIndex: outputIndex, callID: callID, name: "", arguments: arguments
            )
        case .sessionCreated(var session), .sessionUpdated(var session):
            if dialect == .beta {
                session.model = nil
                if case .serverVAD(var vad)? = session.settings.turnDetection {
                    vad.idleTimeoutMs = nil
                    session.settings.turnDetection = .serverVAD(vad)
                }
            } else {
                session.settings.temperature = nil
            }
            // MCP servers go out without their secrets, and not at all in beta.
            session.settings.mcpServers = dialect == .beta ? nil : session.settings.mcpServers?.map { server in
                var server = server
                server.authorization = nil
                server.headers = [:]
                return server
            }
            // They are written in the `tools` array, which then reads back as present.
            if session.settings.mcpServers != nil, session.settings.tools == nil { session.settings.tools = [] }
            if case .sessionCreated = event { return .sessionCreated(session) }
            return .sessionUpdated(session)
        default:
            return event
        }
    }

    @Test func typeNamesFollowTheDialect() {
        let position = RealtimeSamples.position
        let table: [(RealtimeServerEvent, ga: String?, beta: String?)] = [
            (.responseOutputAudioDelta(position, delta: ""), "response.output_audio.delta", "response.audio.delta"),
            (.responseOutputAudioDone(position), "response.output_audio.done", "response.audio.done"),
            (.responseOutputAudioTranscriptDelta(position, delta: ""), "response.output_audio_transcript.delta", "response.audio_transcript.delta"),
            (.responseOutputAudioTranscriptDone(position, transcript: ""), "response.output_audio_transcript.done", "response.audio_transcript.done"),
            (.responseOutputTextDelta(position, delta: ""), "response.output_text.delta", "response.text.delta"),
            (.responseOutputTextDone(position, text: ""), "response.output_text.done", "response.text.done"),
            (.conversationItemAdded(RealtimeSamples.items(dialect: .ga)[0], previousItemID: nil), "conversation.item.added", "conversation.item.created"),
            (.conversationItemDone(RealtimeSamples.items(dialect: .ga)[0], previousItemID: nil), "conversation.item.done", nil),
            (.inputAudioBufferTimeoutTriggered(itemID: "i", audioStartMs: 0, audioEndMs: 0), "input_audio_buffer.timeout_triggered", nil),
            (.inputAudioBufferCleared, "input_audio_buffer.cleared", "input_audio_buffer.cleared"),
            (.parley(type: "parley.x", payload: .null), "parley.x", "parley.x"),
        ]
        for (event, ga, beta) in table {
            #expect(event.typeName(dialect: .ga) == ga)
            #expect(event.typeName(dialect: .beta) == beta)
        }
    }

    @Test func theAudioDeltaIsWrittenExactly() {
        let event = RealtimeServerEvent.responseOutputAudioDelta(
            RealtimeContentPosition(responseID: "resp_1", itemID: "item_2", outputIndex: 1, contentIndex: 0), delta: "AAEC"
        )
        #expect(event.encode(dialect: .ga, eventID: "event_7")
            == #"{"type":"response.output_audio.delta","event_id":"event_7","response_id":"resp_1","item_id":"item_2","output_index":1,"content_index":0,"delta":"AAEC"}"#)
        #expect(event.encode(dialect: .beta, eventID: "event_7")
            == #"{"type":"response.audio.delta","event_id":"event_7","response_id":"resp_1","item_id":"item_2","output_index":1,"content_index":0,"delta":"AAEC"}"#)
    }

    @Test func itemsAndResponsesUseEachDialectsContentNames() throws {
        let item = RealtimeItem.message(
            id: "item_1", role: .assistant, content: [.outputAudio(audio: nil, transcript: "Hi"), .outputText("Yo")], status: .completed
        )
        #expect(item.jsonText(dialect: .ga)
            == #"{"id":"item_1","object":"realtime.item","type":"message","status":"completed","role":"assistant","content":[{"type":"output_audio","transcript":"Hi"},{"type":"output_text","text":"Yo"}]}"#)
        #expect(item.jsonText(dialect: .beta)
            == #"{"id":"item_1","object":"realtime.item","type":"message","status":"completed","role":"assistant","content":[{"type":"audio","transcript":"Hi"},{"type":"text","text":"Yo"}]}"#)
        #expect(try RealtimeItem(jsonText: item.jsonText(dialect: .beta)) == item)

        let cancelled = RealtimeServerEvent.responseDone(RealtimeResponse(
            id: "resp_1", status: .cancelled, statusDetails: RealtimeResponseStatusDetails(reason: .turnDetected)
        ))
        let done = try #require(cancelled.encode(dialect: .ga, eventID: "event_1"))
        #expect(done.contains(#""status":"cancelled","status_details":{"type":"cancelled","reason":"turn_detected"}"#))
        let failed = RealtimeServerEvent.responseDone(RealtimeResponse(
            id: "resp_2", status: .failed,
            statusDetails: RealtimeResponseStatusDetails(error: RealtimeProtocolError(type: "server_error", code: "llm_failed", message: "Down."))
        ))
        #expect(try #require(failed.encode(dialect: .beta)).contains(
            #""status_details":{"type":"failed","error":{"type":"server_error","code":"llm_failed","message":"Down."}}"#
        ))
    }

    @Test func errorEventsCarryTheClientsEventID() throws {
        let error = RealtimeProtocolError(code: "invalid_value", message: "No.", param: "session.voice", eventID: "evt_9")
        #expect(RealtimeServerEvent.error(error).encode(dialect: .ga, eventID: "event_1")
            == #"{"type":"error","event_id":"event_1","error":{"type":"invalid_request_error","code":"invalid_value","message":"No.","param":"session.voice","event_id":"evt_9"}}"#)
        let sessionError = SessionError(code: "transcription_failed", message: "ASR down.", category: .server)
        #expect(RealtimeProtocolError(sessionError, eventID: "e").type == "server_error")
        #expect(RealtimeProtocolError(SessionError(code: "input_audio_buffer_commit_empty", message: "Empty.")).type
            == "invalid_request_error")
    }

    @Test func parleyEventsWriteThePayloadBesideTheType() throws {
        let event = RealtimeServerEvent.parley(
            type: "parley.turn_metrics", payload: .object(["first_audio_ms": .number(312), "type": .string("ignored")])
        )
        let text = try #require(event.encode(dialect: .ga, eventID: "event_1"))
        #expect(text == #"{"type":"parley.turn_metrics","event_id":"event_1","first_audio_ms":312}"#)
        #expect(try RealtimeServerEvent.decode(text) == .parley(type: "parley.turn_metrics", payload: .object(["first_audio_ms": .number(312)])))
    }

    @Test func eachEncodingGetsAFreshEventID() throws {
        var ids = Set<String>()
        for _ in 0..<1000 {
            let text = try #require(RealtimeServerEvent.inputAudioBufferCleared.encode(dialect: .ga))
            guard case .object(let members) = try JSONValue(parsing: text), let id = members["event_id"]?.stringValue else {
                Issue.record("no event_id in \(text)")
                return
            }
            #expect(id.hasPrefix("event_") && id.count == 28)
            ids.insert(id)
        }
        #expect(ids.count == 1000)
    }

    @Test func stringsAreEscapedIntoValidJSON() throws {
        let nasty = "quote \" backslash \\ newline \n tab \t nul \u{0} bell \u{07} unit \u{1F} emoji 👋🏽 e\u{301} </script>"
        let event = RealtimeServerEvent.responseOutputTextDelta(RealtimeSamples.position, delta: nasty)
        let text = try #require(event.encode(dialect: .ga))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["delta"] as? String == nasty)
        #expect(!text.contains("\n"))
        #expect(try RealtimeServerEvent.decode(text) == event)
    }

    @Test func theWordAtATimeScanFindsEveryByteThatNeedsEscaping() {
        func naive(_ bytes: [UInt8]) -> Bool { bytes.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C } }
        var generator = SystemRandomNumberGenerator()
        let safe = Array("ABCXYZabcxyz0189+/=é€ ~!#$%&'()*,-.:;<>?@[]^_`{|}".utf8)
        for _ in 0..<20_000 {
            var bytes = (0..<Int.random(in: 0..<40, using: &generator)).map { _ in safe.randomElement(using: &generator)! }
            if !bytes.isEmpty, Bool.random(using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = [0x00, 0x1F, 0x0A, 0x22, 0x5C, 0x7F, 0x80, 0xFF, 0x20, 0x21, 0x5B, 0x5D]
                    .randomElement(using: &generator)!
            }
            let found = bytes.withUnsafeBufferPointer(RealtimeJSONWriter.containsEscapable)
            #expect(found == naive(bytes), "\(bytes)")
        }
    }

    @Test func decodingToleratesBothSpellingsAndReportsUnknownTypes() throws {
        let beta = #"{"type":"conversation.item.created","event_id":"e","previous_item_id":null,"item":{"id":"i","type":"message","role":"assistant","content":[{"type":"text","text":"Hi"}]}}"#
        #expect(try RealtimeServerEvent.decode(beta) == .conversationItemAdded(
            .message(id: "i", role: .assistant, content: [.outputText("Hi")]), previousItemID: nil
        ))
        #expect(throws: RealtimeProtocolError.self) { try RealtimeServerEvent.decode(#"{"type":"output_audio_buffer.paused","response_id":"r"}"#) }
        do throws(RealtimeProtocolError) {
            _ = try RealtimeServerEvent.decode(#"{"type":"response.output_audio.delta","event_id":"e"}"#)
            Issue.record("decoded an audio delta without its fields")
        } catch {
            #expect(error.code == "missing_required_parameter" && error.param == "response_id")
        }
    }

    /// The WebRTC-only events a call's client hears about its audio track, in either dialect.
    @Test(arguments: RealtimeDialect.allCases)
    func outputAudioBufferEventsRoundTrip(dialect: RealtimeDialect) throws {
        let table: [(RealtimeServerEvent, type: String, responseID: String)] = [
            (.outputAudioBufferStarted(responseID: "resp_1"), "output_audio_buffer.started", "resp_1"),
            (.outputAudioBufferStopped(responseID: "resp_2"), "output_audio_buffer.stopped", "resp_2"),
            (.outputAudioBufferCleared(responseID: "resp_3"), "output_audio_buffer.cleared", "resp_3"),
        ]
        for (event, type, responseID) in table {
            let text = try #require(event.encode(dialect: dialect, eventID: "event_1"))
            let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String])
            #expect(object == ["type": type, "event_id": "event_1", "response_id": responseID])
            #expect(try RealtimeServerEvent.decode(text) == event)
        }
        #expect(throws: RealtimeProtocolError.self) { try RealtimeServerEvent.decode(#"{"type":"output_audio_buffer.started"}"#) }
    }

    // MARK: Items and chat messages

    @Test func itemsBecomeChatMessages() {
        let table: [(RealtimeItem, ChatMessage?)] = [
            (.message(id: "1", role: .user, content: [.inputText("Hi"), .inputAudio(audio: nil, transcript: "there")]),
             .user([.text("Hi"), .text("there")])),
            (.message(id: "2", role: .user, content: [.inputAudio(audio: "AAAA", transcript: nil)]), nil),
            (.message(id: "3", role: .user, content: [.inputImage(url: "https://x/y.png")]), .user([.imageURL("https://x/y.png")])),
            (.message(id: "4", role: .assistant, content: [.outputAudio(audio: nil, transcript: "Half")], status: .incomplete),
             .assistant(text: "Half", interrupted: true)),
            (.message(id: "5", role: .assistant, content: [.outputText("Done.")], status: .completed), .assistant(text: "Done.")),
            (.message(id: "6", role: .system, content: [.inputText("Rules.")]), .system("Rules.")),
            (.functionCall(id: "7", callID: "call_1", name: "f", arguments: "{}"),
             .assistant(text: "", toolCalls: [ToolCall(id: "call_1", name: "f", arguments: "{}")])),
            (.functionCallOutput(id: "8", callID: "call_1", output: "ok"), .tool(callID: "call_1", content: "ok")),
        ]
        for (item, message) in table {
            #expect(item.chatMessage == message)
        }
    }

    @Test func chatMessagesBecomeItems() {
        let reply = ChatMessage.assistant(
            text: "Let me check.", toolCalls: [ToolCall(id: "call_1", name: "f", arguments: "{}"), ToolCall(id: "call_2", name: "g", arguments: "[]")]
        )
        let items = RealtimeItem.items(for: reply, spoken: true)
        #expect(items.map(\.kind) == [
            .message(role: .assistant, content: [.outputAudio(audio: nil, transcript: "Let me check.")]),
            .functionCall(callID: "call_1", name: "f", arguments: "{}"),
            .functionCall(callID: "call_2", name: "g", arguments: "[]"),
        ])
        #expect(Set(items.compactMap(\.id)).count == 3)
        #expect(items.allSatisfy { $0.id?.hasPrefix("item_") == true && $0.status == .completed })

        let interrupted = RealtimeItem.items(for: .assistant(text: "Hal", interrupted: true), spoken: false)
        #expect(interrupted.map(\.kind) == [.message(role: .assistant, content: [.outputText("Hal")])])
        #expect(interrupted.first?.status == .incomplete)

        for message: ChatMessage in [.system("S"), .user([.text("U"), .imageURL("data:x")]), .tool(callID: "c", content: "out"), .assistant(text: "A")] {
            let converted = RealtimeItem.items(for: message, spoken: false)
            #expect(converted.count == 1)
            #expect(converted.first?.chatMessage == message)
        }
    }
}
