import Foundation
import Testing
@testable import ParleyCore

@Suite struct RealtimeClientEventTests {
    // MARK: Decoding tables

    /// A message and what it decodes to in each dialect.
    struct DecodingCase: CustomTestStringConvertible, Sendable {
        var json: String
        var expected: RealtimeClientEvent
        var testDescription: String { String(json.prefix(70)) }
    }

    static let sharedCases: [DecodingCase] = [
        DecodingCase(json: #"{"type":"input_audio_buffer.append","audio":"AAAA"}"#, expected: .inputAudioBufferAppend(audio: "AAAA")),
        DecodingCase(
            json: #"{"event_id":"e1","type":"input_audio_buffer.append","audio":""}"#,
            expected: .inputAudioBufferAppend(audio: "", eventID: "e1")
        ),
        DecodingCase(json: #"{"type":"input_audio_buffer.commit","event_id":"c"}"#, expected: .inputAudioBufferCommit(eventID: "c")),
        DecodingCase(json: #" { "type" : "input_audio_buffer.clear" } "#, expected: .inputAudioBufferClear()),
        DecodingCase(json: #"{"type":"output_audio_buffer.clear"}"#, expected: .outputAudioBufferClear()),
        DecodingCase(json: #"{"type":"parley.key_press","key":"5","event_id":"k1"}"#, expected: .keyPress(key: "5", eventID: "k1")),
        DecodingCase(json: #"{"type":"parley.key_press","key":"*"}"#, expected: .keyPress(key: "*")),
        DecodingCase(json: ##"{"type":"parley.key_press","key":"#"}"##, expected: .keyPress(key: "#")),
        DecodingCase(json: #"{"type":"parley.key_press","key":"D"}"#, expected: .keyPress(key: "D")),
        DecodingCase(json: #"{"type":"conversation.item.delete","item_id":"item_1"}"#, expected: .conversationItemDelete(itemID: "item_1")),
        DecodingCase(json: #"{"type":"conversation.item.retrieve","item_id":"item_1"}"#, expected: .conversationItemRetrieve(itemID: "item_1")),
        DecodingCase(
            json: #"{"type":"conversation.item.truncate","item_id":"item_1","content_index":0,"audio_end_ms":1200.0}"#,
            expected: .conversationItemTruncate(itemID: "item_1", contentIndex: 0, audioEndMs: 1200)
        ),
        DecodingCase(json: #"{"type":"response.create"}"#, expected: .responseCreate()),
        DecodingCase(json: #"{"type":"response.create","response":null}"#, expected: .responseCreate()),
        DecodingCase(json: #"{"type":"response.create","response":{}}"#, expected: .responseCreate(RealtimeResponseOptions())),
        DecodingCase(json: #"{"type":"response.cancel"}"#, expected: .responseCancel()),
        DecodingCase(json: #"{"type":"response.cancel","response_id":"resp_9"}"#, expected: .responseCancel(responseID: "resp_9")),
        DecodingCase(
            json: #"{"type":"conversation.item.create","previous_item_id":"root","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"Hi"}]}}"#,
            expected: .conversationItemCreate(
                item: .message(id: nil, role: .user, content: [.inputText("Hi")]), previousItemID: "root"
            )
        ),
        DecodingCase(
            json: #"{"type":"conversation.item.create","item":{"role":"system","content":[{"type":"input_text","text":"Be terse."}]}}"#,
            expected: .conversationItemCreate(item: .message(id: nil, role: .system, content: [.inputText("Be terse.")]))
        ),
        DecodingCase(
            json: #"{"type":"conversation.item.create","item":{"id":"item_a","type":"message","role":"assistant","content":[{"type":"text","text":"One"},{"type":"output_text","text":"Two"},{"type":"audio","transcript":"Three"},{"type":"output_audio","audio":"AAAA","transcript":null}]}}"#,
            expected: .conversationItemCreate(item: .message(
                id: "item_a", role: .assistant,
                content: [.outputText("One"), .outputText("Two"), .outputAudio(audio: nil, transcript: "Three"), .outputAudio(audio: "AAAA", transcript: nil)]
            ))
        ),
        DecodingCase(
            json: #"{"type":"conversation.item.create","item":{"type":"function_call","call_id":"call_1","name":"lookup","arguments":"{}","status":"completed"}}"#,
            expected: .conversationItemCreate(item: .functionCall(id: nil, callID: "call_1", name: "lookup", arguments: "{}", status: .completed))
        ),
        DecodingCase(
            json: #"{"type":"conversation.item.create","item":{"type":"function_call_output","call_id":"call_1","output":"42"},"unknown":{"deep":[1,2]}}"#,
            expected: .conversationItemCreate(item: .functionCallOutput(id: nil, callID: "call_1", output: "42"))
        ),
        DecodingCase(
            json: #"{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_audio","audio":"AAAA"},{"type":"input_image","image_url":"data:image/png;base64,AA"}]}}"#,
            expected: .conversationItemCreate(item: .message(
                id: nil, role: .user, content: [.inputAudio(audio: "AAAA", transcript: nil), .inputImage(url: "data:image/png;base64,AA")]
            ))
        ),
    ]

    @Test(arguments: sharedCases, RealtimeDialect.allCases)
    func decodesInBothDialects(_ testCase: DecodingCase, dialect: RealtimeDialect) throws {
        #expect(try RealtimeClientEvent.decode(testCase.json, dialect: dialect) == testCase.expected)
    }

    @Test func gaSessionUpdateReadsTheNestedAudioObject() throws {
        let json = #"""
        {"type":"session.update","event_id":"s1","session":{"type":"realtime","model":"gpt-realtime",
         "instructions":"Hi","output_modalities":["text"],"tracing":"auto","include":null,
         "audio":{"input":{"format":{"type":"audio/pcm","rate":24000},"noise_reduction":null,
                           "transcription":{"model":"whisper-1","language":"de"},
                           "turn_detection":{"type":"server_vad","threshold":0.25,"silence_duration_ms":800}},
                  "output":{"format":{"type":"audio/pcm"},"voice":{"id":"voice_custom"},"speed":0.5}},
         "tools":[{"type":"function","name":"t1","description":"d","parameters":{"type":"object","properties":{}}},{"name":"t2"}],
         "tool_choice":"none","max_output_tokens":"inf"}}
        """#
        let expected = RealtimeSessionSettings(
            instructions: "Hi", voice: "voice_custom", speed: 0.5, outputModalities: [.text], inputAudioFormat: .pcm16,
            outputAudioFormat: .pcm16, turnDetection: .serverVAD(ServerVADSettings(threshold: 0.25, silenceDurationMs: 800)),
            inputTranscription: .enabled(model: "whisper-1", language: "de", prompt: nil),
            tools: [
                ToolDefinition(name: "t1", description: "d", parameters: .object(["type": .string("object"), "properties": .object([:])])),
                ToolDefinition(name: "t2", description: "", parameters: .object(["type": .string("object"), "properties": .object([:])])),
            ],
            toolChoice: ToolChoice.none, maxOutputTokens: .unlimited, noiseReduction: .some(nil)
        )
        #expect(try RealtimeClientEvent.decode(json, dialect: .ga) == .sessionUpdate(expected, eventID: "s1"))
    }

    @Test func betaSessionUpdateReadsTheFlatFields() throws {
        let json = #"""
        {"type":"session.update","session":{"modalities":["text","audio"],"voice":"ash","input_audio_format":"pcm16",
         "output_audio_format":"pcm16","input_audio_transcription":{"model":"whisper-1"},
         "turn_detection":{"type":"server_vad","prefix_padding_ms":100,"create_response":false},
         "temperature":0.6,"max_response_output_tokens":4096,"tool_choice":"my_tool"}}
        """#
        let expected = RealtimeSessionSettings(
            voice: "ash", outputModalities: [.audio], inputAudioFormat: .pcm16, outputAudioFormat: .pcm16,
            turnDetection: .serverVAD(ServerVADSettings(prefixPaddingMs: 100, createResponse: false)),
            inputTranscription: .enabled(model: "whisper-1", language: nil, prompt: nil), toolChoice: .function("my_tool"),
            temperature: 0.6, maxOutputTokens: .limited(4096)
        )
        #expect(try RealtimeClientEvent.decode(json, dialect: .beta) == .sessionUpdate(expected))
    }

    @Test(arguments: RealtimeDialect.allCases)
    func turnDetectionIsTriState(dialect: RealtimeDialect) throws {
        func settings(_ session: String) throws -> RealtimeSessionSettings {
            guard case .sessionUpdate(let settings, _) = try RealtimeClientEvent.decode(
                #"{"type":"session.update","session":\#(session)}"#, dialect: dialect
            ) else { throw RealtimeProtocolError(code: "test", message: "not a session.update") }
            return settings
        }
        // Absent: unchanged. Null: manual commits. Object: server VAD.
        #expect(try settings(#"{}"#).turnDetection == nil)
        #expect(try settings(#"{"turn_detection":null}"#).turnDetection == .manual)
        #expect(try settings(#"{"audio":{"input":{"turn_detection":null}}}"#).turnDetection == .manual)
        #expect(try settings(#"{"audio":{"input":{}}}"#).turnDetection == nil)
        #expect(try settings(#"{"turn_detection":{"type":"server_vad"}}"#).turnDetection == .serverVAD(ServerVADSettings()))
        #expect(try settings(#"{"turn_detection":{}}"#).turnDetection == .serverVAD(ServerVADSettings()))
        #expect(try settings(#"{"turn_detection":{"type":"semantic_vad","eagerness":"low","interrupt_response":false}}"#)
            .turnDetection == .serverVAD(ServerVADSettings(interruptResponse: false, eagerness: .low)))
        #expect(try settings(#"{"turn_detection":{"type":"semantic_vad"}}"#).turnDetection == .serverVAD(ServerVADSettings(eagerness: .auto)))
        #expect(throws: RealtimeProtocolError.self) { try settings(#"{"turn_detection":{"type":"semantic_vad","eagerness":"eager"}}"#) }
        // Transcription is tri-state the same way.
        #expect(try settings(#"{}"#).inputTranscription == nil)
        #expect(try settings(#"{"input_audio_transcription":null}"#).inputTranscription == .disabled)
        #expect(try settings(#"{"audio":{"input":{"transcription":{}}}}"#).inputTranscription
            == .enabled(model: nil, language: nil, prompt: nil))
    }

    @Test func theDialectsOwnSpellingWinsWhenBothAreSent() throws {
        let json = #"{"type":"session.update","session":{"voice":"beta_voice","audio":{"output":{"voice":"ga_voice"}},"modalities":["text"],"output_modalities":["audio"]}}"#
        guard case .sessionUpdate(let ga, _) = try RealtimeClientEvent.decode(json, dialect: .ga),
              case .sessionUpdate(let beta, _) = try RealtimeClientEvent.decode(json, dialect: .beta) else {
            Issue.record("not session updates")
            return
        }
        #expect(ga.voice == "ga_voice" && ga.outputModalities == [.audio])
        #expect(beta.voice == "beta_voice" && beta.outputModalities == [.text])
    }

    @Test func mergingKeepsWhatAnUpdateDoesNotMention() {
        let current = RealtimeSessionSettings(
            instructions: "Old", voice: "alloy", turnDetection: .serverVAD(ServerVADSettings()), tools: [RealtimeSamples.weatherTool]
        )
        let merged = current.merging(RealtimeSessionSettings(instructions: "", turnDetection: .manual, tools: []))
        #expect(merged == RealtimeSessionSettings(instructions: "", voice: "alloy", turnDetection: .manual, tools: []))
        #expect(merged.speaksResponses)
        #expect(!RealtimeSessionSettings(outputModalities: [.text]).speaksResponses)
    }

    @Test func settingsBridgeToTheVoiceSessionConfiguration() {
        let base = VoiceSessionConfiguration()
        let full = RealtimeSessionSettings(base)
        #expect(full.turnDetection == .serverVAD(base.turnDetection ?? ServerVADSettings()))
        #expect(full.outputModalities == [.audio] && full.maxOutputTokens == .unlimited && full.inputAudioFormat == .pcm16)
        #expect(full.applied(to: VoiceSessionConfiguration(instructions: "other", turnDetection: nil)) == base)

        let update = RealtimeSessionSettings(
            instructions: "New", voice: "ash", speed: 1.2, outputModalities: [.text], turnDetection: .manual,
            tools: [RealtimeSamples.weatherTool], temperature: 0.6, maxOutputTokens: .limited(99)
        )
        let applied = update.applied(to: base)
        #expect(applied.instructions == "New" && applied.speech == SpeechOptions(voice: "ash", speed: 1.2))
        #expect(!applied.speaksResponses && applied.turnDetection == nil && applied.clientTools == [RealtimeSamples.weatherTool])
        #expect(applied.temperature == 0.6 && applied.maxResponseTokens == 99)
        #expect(applied.maximumInputBufferMs == base.maximumInputBufferMs)
        #expect(RealtimeSessionSettings().applied(to: applied) == applied)
        #expect(RealtimeSessionSettings(applied).applied(to: base) == applied)
    }

    @Test func theTranscriptionLanguageAndPromptReachTheConfiguration() {
        let told = RealtimeSessionSettings(inputTranscription: .enabled(model: "whisper-1", language: "de", prompt: "Quaxtonby"))
            .applied(to: VoiceSessionConfiguration())
        #expect(told.transcription == TranscriptionHints(language: "de", prompt: "Quaxtonby"))
        // A transcription object replaces the last one whole; an empty language is none.
        let cleared = RealtimeSessionSettings(inputTranscription: .enabled(model: nil, language: "", prompt: nil)).applied(to: told)
        #expect(cleared.transcription == TranscriptionHints())
        #expect(RealtimeSessionSettings(inputTranscription: .disabled).applied(to: told).transcription == TranscriptionHints())
        #expect(RealtimeSessionSettings(instructions: "Hi").applied(to: told).transcription == told.transcription)
    }

    // MARK: Malformed input

    /// A hostile message and the error it must produce.
    struct MalformedCase: CustomTestStringConvertible, Sendable {
        var json: String
        var code: String
        var param: String?
        var eventID: String?
        var messageContains: String?
        var testDescription: String { "\(code): \(json.prefix(60))" }

        init(_ json: String, _ code: String, param: String? = nil, eventID: String? = nil, messageContains: String? = nil) {
            self.json = json
            self.code = code
            self.param = param
            self.eventID = eventID
            self.messageContains = messageContains
        }
    }

    static let malformedCases: [MalformedCase] = [
        MalformedCase("", "invalid_json"),
        MalformedCase("   ", "invalid_json"),
        MalformedCase("{", "invalid_json"),
        MalformedCase(#"{"type":"input_audio_buffer.commit",}"#, "invalid_json"),
        MalformedCase(#"{"type":"input_audio_buffer.commit"} trailing"#, "invalid_json"),
        MalformedCase(#"{'type':'x'}"#, "invalid_json"),
        MalformedCase(#"{"type":"x\q"}"#, "invalid_json"),
        MalformedCase("{\"type\":\"a\u{01}b\"}", "invalid_json"),
        MalformedCase(#"{"type":tru}"#, "invalid_json"),
        MalformedCase(#"{"type":"input_audio_buffer.commit","n":01}"#, "invalid_json"),
        MalformedCase(#"{"type":"input_audio_buffer.commit","n":-}"#, "invalid_json"),
        MalformedCase(#"{"type":"input_audio_buffer.commit","n":1.}"#, "invalid_json"),
        MalformedCase(#"{"type":"input_audio_buffer.commit","n":NaN}"#, "invalid_json"),
        MalformedCase(#"{"type":"x","s":"\u12"}"#, "invalid_json"),
        MalformedCase(String(repeating: "[", count: 100_000), "invalid_json", messageContains: "deeper than 64"),
        MalformedCase(#"{"type":"input_audio_buffer.commit","x":"# + String(repeating: "{\"a\":", count: 70) + "1" + String(repeating: "}", count: 70) + "}", "invalid_json"),
        MalformedCase("[]", "invalid_event"),
        MalformedCase("null", "invalid_event"),
        MalformedCase("42", "invalid_event"),
        MalformedCase(#""input_audio_buffer.commit""#, "invalid_event"),
        MalformedCase("{}", "invalid_event", param: "type"),
        MalformedCase(#"{"type":null,"event_id":"e7"}"#, "invalid_event", param: "type", eventID: "e7"),
        MalformedCase(#"{"type":7}"#, "invalid_event", param: "type", messageContains: "a number"),
        MalformedCase(#"{"type":["session.update"]}"#, "invalid_event", param: "type"),
        MalformedCase(#"{"type":"session.updatee","event_id":"e8"}"#, "unknown_event", param: "type", eventID: "e8", messageContains: "'session.updatee'"),
        MalformedCase(#"{"type":"response.audio.delta"}"#, "unknown_event", param: "type"),
        MalformedCase(#"{"type":"\#(String(repeating: "x", count: 10_000))"}"#, "unknown_event", messageContains: "xxx…'"),
        MalformedCase(#"{"type":"input_audio_buffer.commit","event_id":5}"#, "invalid_value", param: "event_id"),
        MalformedCase(#"{"type":"input_audio_buffer.append","event_id":"a1"}"#, "missing_required_parameter", param: "audio", eventID: "a1"),
        MalformedCase(#"{"type":"input_audio_buffer.append","audio":null}"#, "missing_required_parameter", param: "audio"),
        MalformedCase(#"{"type":"input_audio_buffer.append","audio":5}"#, "invalid_value", param: "audio"),
        MalformedCase(#"{"type":"input_audio_buffer.append","audio":["AAAA"]}"#, "invalid_value", param: "audio"),
        MalformedCase(#"{"type":"conversation.item.truncate","item_id":"i","content_index":0}"#, "missing_required_parameter", param: "audio_end_ms"),
        MalformedCase(#"{"type":"conversation.item.truncate","item_id":"i","content_index":0,"audio_end_ms":-5}"#, "invalid_value", param: "audio_end_ms"),
        MalformedCase(#"{"type":"conversation.item.truncate","item_id":"i","content_index":0.5,"audio_end_ms":5}"#, "invalid_value", param: "content_index"),
        MalformedCase(#"{"type":"conversation.item.truncate","item_id":"i","content_index":0,"audio_end_ms":1e999}"#, "invalid_value", param: "audio_end_ms"),
        MalformedCase(#"{"type":"conversation.item.truncate","item_id":"i","content_index":0,"audio_end_ms":123456789012345678901234567890}"#, "invalid_value", param: "audio_end_ms"),
        MalformedCase(#"{"type":"conversation.item.truncate","item_id":"i","content_index":"0","audio_end_ms":5}"#, "invalid_value", param: "content_index"),
        MalformedCase(#"{"type":"conversation.item.truncate","item_id":"","content_index":0,"audio_end_ms":5}"#, "invalid_value", param: "item_id"),
        MalformedCase(#"{"type":"conversation.item.delete"}"#, "missing_required_parameter", param: "item_id"),
        MalformedCase(#"{"type":"conversation.item.delete","item_id":"\#(String(repeating: "i", count: 200))"}"#, "invalid_value", param: "item_id"),
        MalformedCase(#"{"type":"conversation.item.create"}"#, "missing_required_parameter", param: "item"),
        MalformedCase(#"{"type":"conversation.item.create","item":"hello"}"#, "invalid_value", param: "item"),
        MalformedCase(#"{"type":"conversation.item.create","item":{}}"#, "missing_required_parameter", param: "item.type"),
        MalformedCase(#"{"type":"conversation.item.create","item":{"type":"item_reference","id":"x"}}"#, "unsupported_value", param: "item.type"),
        MalformedCase(#"{"type":"conversation.item.create","item":{"type":"message","role":"robot","content":[]}}"#, "invalid_value", param: "item.role"),
        MalformedCase(#"{"type":"conversation.item.create","item":{"type":"message","content":[]}}"#, "missing_required_parameter", param: "item.role"),
        MalformedCase(#"{"type":"conversation.item.create","item":{"type":"message","role":"user","content":{"type":"input_text"}}}"#, "invalid_value", param: "item.content"),
        MalformedCase(#"{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text","text":1}]}}"#, "invalid_value", param: "item.content[0].text"),
        MalformedCase(#"{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text"}]}}"#, "missing_required_parameter", param: "item.content[0].text"),
        MalformedCase(#"{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[7]}}"#, "invalid_value", param: "item.content[0]"),
        MalformedCase(#"{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_video"}]}}"#, "unsupported_value", param: "item.content[0].type"),
        MalformedCase(#"{"type":"conversation.item.create","item":{"type":"message","role":"user","status":"done","content":[]}}"#, "invalid_value", param: "item.status"),
        MalformedCase(#"{"type":"conversation.item.create","item":{"type":"function_call_output","output":"x"}}"#, "missing_required_parameter", param: "item.call_id"),
        MalformedCase(#"{"type":"conversation.item.create","item":{"type":"function_call","call_id":"c","arguments":"{}"}}"#, "missing_required_parameter", param: "item.name"),
        MalformedCase(#"{"type":"parley.key_press","event_id":"k2"}"#, "invalid_value", param: "key", eventID: "k2", messageContains: "0-9, *, #, A, B, C or D"),
        MalformedCase(#"{"type":"parley.key_press","key":null}"#, "invalid_value", param: "key"),
        MalformedCase(#"{"type":"parley.key_press","key":""}"#, "invalid_value", param: "key"),
        MalformedCase(#"{"type":"parley.key_press","key":"12"}"#, "invalid_value", param: "key"),
        MalformedCase(#"{"type":"parley.key_press","key":"x"}"#, "invalid_value", param: "key"),
        MalformedCase(#"{"type":"parley.key_press","key":"a"}"#, "invalid_value", param: "key"),
        MalformedCase(#"{"type":"parley.key_press","key":"E"}"#, "invalid_value", param: "key"),
        MalformedCase(#"{"type":"parley.key_press","key":" 5"}"#, "invalid_value", param: "key"),
        MalformedCase(#"{"type":"parley.key_press","key":5}"#, "invalid_value", param: "key"),
        MalformedCase("{\"type\":\"parley.key_press\",\"key\":\"5\u{301}\"}", "invalid_value", param: "key"),
        MalformedCase(#"{"type":"session.update"}"#, "missing_required_parameter", param: "session"),
        MalformedCase(#"{"type":"session.update","session":[]}"#, "invalid_value", param: "session"),
        MalformedCase(#"{"type":"session.update","session":{"type":"translation"}}"#, "invalid_value", param: "session.type"),
        MalformedCase(#"{"type":"session.update","session":{"type":"conversation"}}"#, "invalid_value", param: "session.type"),
        MalformedCase(#"{"type":"session.update","session":{"instructions":42}}"#, "invalid_value", param: "session.instructions"),
        MalformedCase(#"{"type":"session.update","session":{"turn_detection":5}}"#, "invalid_value", param: "session.turn_detection"),
        MalformedCase(#"{"type":"session.update","session":{"turn_detection":{"type":"push_to_talk"}}}"#, "invalid_value", param: "session.turn_detection.type"),
        MalformedCase(#"{"type":"session.update","session":{"turn_detection":{"threshold":1.5}}}"#, "invalid_value", param: "session.turn_detection.threshold"),
        MalformedCase(#"{"type":"session.update","session":{"turn_detection":{"silence_duration_ms":"long"}}}"#, "invalid_value", param: "session.turn_detection.silence_duration_ms"),
        MalformedCase(#"{"type":"session.update","session":{"turn_detection":{"create_response":"yes"}}}"#, "invalid_value", param: "session.turn_detection.create_response"),
        MalformedCase(#"{"type":"session.update","session":{"audio":{"input":{"turn_detection":{"prefix_padding_ms":-1}}}}}"#, "invalid_value", param: "session.audio.input.turn_detection.prefix_padding_ms"),
        MalformedCase(#"{"type":"session.update","session":{"audio":{"input":{"format":{"type":"audio/opus"}}}}}"#, "unsupported_value", param: "session.audio.input.format.type"),
        MalformedCase(#"{"type":"session.update","session":{"audio":{"output":{"format":{"type":"audio/pcm","rate":16000}}}}}"#, "unsupported_value", param: "session.audio.output.format.rate"),
        MalformedCase(#"{"type":"session.update","session":{"audio":"loud"}}"#, "invalid_value", param: "session.audio"),
        MalformedCase(#"{"type":"session.update","session":{"input_audio_format":"g722"}}"#, "unsupported_value", param: "session.input_audio_format"),
        MalformedCase(#"{"type":"session.update","session":{"output_audio_format":24000}}"#, "invalid_value", param: "session.output_audio_format"),
        MalformedCase(#"{"type":"session.update","session":{"modalities":["video"]}}"#, "invalid_value", param: "session.modalities"),
        MalformedCase(#"{"type":"session.update","session":{"output_modalities":[]}}"#, "invalid_value", param: "session.output_modalities"),
        MalformedCase(#"{"type":"session.update","session":{"output_modalities":"audio"}}"#, "invalid_value", param: "session.output_modalities"),
        MalformedCase(#"{"type":"session.update","session":{"voice":""}}"#, "invalid_value", param: "session.voice"),
        MalformedCase(#"{"type":"session.update","session":{"audio":{"output":{"voice":{"name":"x"}}}}}"#, "missing_required_parameter", param: "session.audio.output.voice.id"),
        MalformedCase(#"{"type":"session.update","session":{"speed":9}}"#, "invalid_value", param: "session.speed"),
        MalformedCase(#"{"type":"session.update","session":{"temperature":-1}}"#, "invalid_value", param: "session.temperature"),
        MalformedCase(#"{"type":"session.update","session":{"max_output_tokens":"lots"}}"#, "invalid_value", param: "session.max_output_tokens"),
        MalformedCase(#"{"type":"session.update","session":{"max_response_output_tokens":0}}"#, "invalid_value", param: "session.max_response_output_tokens"),
        MalformedCase(#"{"type":"session.update","session":{"tools":{}}}"#, "invalid_value", param: "session.tools"),
        MalformedCase(#"{"type":"session.update","session":{"tools":[{"type":"mcp","server_label":"x"}]}}"#, "missing_required_parameter", param: "session.tools[0].server_url"),
        MalformedCase(#"{"type":"session.update","session":{"tools":[{"type":"function"}]}}"#, "missing_required_parameter", param: "session.tools[0].name"),
        MalformedCase(#"{"type":"session.update","session":{"tools":[{"name":"ok"},{"name":"not ok!"}]}}"#, "invalid_value", param: "session.tools[1].name"),
        MalformedCase(#"{"type":"session.update","session":{"tools":[{"name":"t","parameters":"{}"}]}}"#, "invalid_value", param: "session.tools[0].parameters"),
        MalformedCase(#"{"type":"session.update","session":{"tool_choice":5}}"#, "invalid_value", param: "session.tool_choice"),
        MalformedCase(#"{"type":"session.update","session":{"tool_choice":{"type":"mcp","server_label":"x"}}}"#, "unsupported_value", param: "session.tool_choice.type"),
        MalformedCase(#"{"type":"session.update","session":{"tool_choice":{"type":"function"}}}"#, "missing_required_parameter", param: "session.tool_choice.name"),
        MalformedCase(#"{"type":"session.update","session":{"input_audio_transcription":{"model":7}}}"#, "invalid_value", param: "session.input_audio_transcription.model"),
        MalformedCase(#"{"type":"response.create","response":"now"}"#, "invalid_value", param: "response"),
        MalformedCase(#"{"type":"response.create","response":{"conversation":"conv_1"}}"#, "unsupported_value", param: "response.conversation"),
        MalformedCase(#"{"type":"response.create","response":{"metadata":{"k":1}}}"#, "invalid_value", param: "response.metadata.k"),
        MalformedCase(#"{"type":"response.create","response":{"input":[{"type":"item_reference","id":"i"}]}}"#, "unsupported_value", param: "response.input[0].type"),
        MalformedCase(#"{"type":"response.create","event_id":"r1","response":{"output_modalities":[1]}}"#, "invalid_value", param: "response.output_modalities[0]", eventID: "r1"),
        MalformedCase(#"{"type":"response.cancel","response_id":false}"#, "invalid_value", param: "response_id"),
        MalformedCase(#"{"type":"session.update","session":{"modalities":["\#(String(repeating: "v", count: 10_000))"]}}"#, "invalid_value", param: "session.modalities", messageContains: "vvv…'"),
        MalformedCase(#"{"type":"conversation.item.create","item":{"type":"message","role":"\#(String(repeating: "r", count: 10_000))"}}"#, "invalid_value", param: "item.role", messageContains: "rrr…'"),
        MalformedCase(#"{"type":"response.create","response":{"metadata":{"\#(String(repeating: "k", count: 10_000))":1}}}"#, "invalid_value", messageContains: "kkk…'"),
    ]

    @Test(arguments: malformedCases, RealtimeDialect.allCases)
    func rejectsMalformedInputWithATypedError(_ testCase: MalformedCase, dialect: RealtimeDialect) {
        do throws(RealtimeProtocolError) {
            let event = try RealtimeClientEvent.decode(testCase.json, dialect: dialect)
            Issue.record("decoded \(event)")
        } catch {
            #expect(error.code == testCase.code, "\(error.message)")
            #expect(error.type == "invalid_request_error")
            if let param = testCase.param { #expect(error.param == param, "\(error.message)") }
            #expect(error.eventID == testCase.eventID)
            if let fragment = testCase.messageContains { #expect(error.message.contains(fragment), "\(error.message)") }
            #expect(error.message.count < 450, "a hostile value is cut, not echoed")
        }
    }

    @Test func errorsRepeatTheEventIDOfTheEventThatCausedThem() {
        #expect(throws: RealtimeProtocolError.invalidValue("session.speed", "9.0 is outside 0.25…1.5.").attributed(to: "evt_42")) {
            try RealtimeClientEvent.decode(#"{"event_id":"evt_42","type":"session.update","session":{"speed":9}}"#, dialect: .ga)
        }
    }

    @Test func toleratesOddButValidJSON() throws {
        // Duplicate keys (last wins), escapes, surrogate pairs, a lone surrogate, big and tiny numbers in ignored fields.
        let json = #"{"type":"conversation.item.create","type":"conversation.item.create","big":1e308,"tiny":-0.0e-400,"item":{"type":"message","role":"user","content":[{"type":"input_text","text":"\"q\" \\ \/ \b\f\n\r\t \u00e9 \ud83d\ude00 \ud800 x"}]}}"#
        let event = try RealtimeClientEvent.decode(json, dialect: .ga)
        #expect(event == .conversationItemCreate(item: .message(
            id: nil, role: .user, content: [.inputText("\"q\" \\ / \u{08}\u{0C}\n\r\t é 😀 \u{FFFD} x")]
        )))
    }

    @Test func neverCrashesOnGarbage() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array(#"{}[]":,0123456789.eE+-truefalsnl \\"type"session.update"#.utf8)
        for _ in 0..<3000 {
            let length = Int.random(in: 0..<200, using: &generator)
            let bytes = (0..<length).map { _ in alphabet.randomElement(using: &generator)! }
            let text = String(decoding: bytes, as: UTF8.self)
            _ = try? RealtimeClientEvent.decode(text, dialect: .ga)
            _ = try? RealtimeServerEvent.decode(text)
        }
        // Every valid event with each member replaced by values of every other type.
        let replacements: [JSONValue] = [
            .null, .bool(true), .number(-1), .number(1e300), .string(""), .array([.null]), .object(["x": .null]),
        ]
        for sample in RealtimeSamples.clientEvents {
            guard case .object(let members) = try? JSONValue(parsing: sample.encode(dialect: .ga)) else {
                Issue.record("sample does not parse")
                continue
            }
            for key in members.keys {
                for replacement in replacements {
                    var mutated = members
                    mutated[key] = replacement
                    _ = try? RealtimeClientEvent.decode(JSONValue.object(mutated).jsonText, dialect: .ga)
                }
            }
        }
    }

    // MARK: Encoding

    @Test(arguments: RealtimeDialect.allCases)
    func everyClientEventRoundTrips(dialect: RealtimeDialect) throws {
        for event in RealtimeSamples.clientEvents(dialect: dialect) {
            let text = event.encode(dialect: dialect)
            #expect(try RealtimeClientEvent.decode(text, dialect: dialect) == event, "\(text)")
            #expect(try JSONSerialization.jsonObject(with: Data(text.utf8)) is [String: Any])
        }
    }

    @Test func encodesTheDialectsSessionShape() throws {
        let update = RealtimeClientEvent.sessionUpdate(RealtimeSessionSettings(
            voice: "alloy", outputModalities: [.audio], inputAudioFormat: .pcm16, turnDetection: .manual, temperature: 0.7
        ))
        #expect(update.encode(dialect: .ga)
            == #"{"type":"session.update","session":{"type":"realtime","output_modalities":["audio"],"audio":{"input":{"format":{"type":"audio/pcm","rate":24000},"turn_detection":null},"output":{"voice":"alloy"}}}}"#)
        #expect(update.encode(dialect: .beta)
            == #"{"type":"session.update","session":{"modalities":["text","audio"],"voice":"alloy","input_audio_format":"pcm16","turn_detection":null,"temperature":0.7}}"#)
        #expect(RealtimeClientEvent.inputAudioBufferAppend(audio: "AAAA", eventID: "e").encode(dialect: .ga)
            == #"{"type":"input_audio_buffer.append","event_id":"e","audio":"AAAA"}"#)
    }

    @Test func dialectFollowsTheOpenAIBetaHeader() {
        #expect(RealtimeDialect(openAIBetaHeader: nil) == .ga)
        #expect(RealtimeDialect(openAIBetaHeader: "realtime=v1") == .beta)
        #expect(RealtimeDialect(openAIBetaHeader: "assistants=v2, realtime=v1") == .beta)
        #expect(RealtimeDialect(openAIBetaHeader: "realtime=v2") == .ga)
    }
}

extension RealtimeSamples {
    /// One of every client event, in the shapes that survive a round trip in `dialect`.
    static func clientEvents(dialect: RealtimeDialect) -> [RealtimeClientEvent] {
        let full = RealtimeSessionSettings(
            instructions: "Say \"hi\".\n", voice: "alloy", speed: 1.2,
            outputModalities: [.audio], inputAudioFormat: .pcm16, outputAudioFormat: .pcm16,
            turnDetection: .serverVAD(ServerVADSettings(threshold: 0.7, idleTimeoutMs: dialect == .ga ? 9000 : nil)),
            inputTranscription: .enabled(model: "whisper-1", language: "en", prompt: "names"),
            tools: [weatherTool], toolChoice: .function("get_weather"), temperature: dialect == .ga ? nil : 0.9,
            maxOutputTokens: .limited(200)
        )
        return [
            .sessionUpdate(full, eventID: "e1"),
            .sessionUpdate(RealtimeSessionSettings(turnDetection: .manual, inputTranscription: .disabled, tools: [])),
            .sessionUpdate(RealtimeSessionSettings(outputModalities: [.text], toolChoice: .required, maxOutputTokens: .unlimited)),
        ] + (dialect == .ga ? [.sessionUpdate(RealtimeSessionSettings(sessionType: .transcription))] : []) + [
            .inputAudioBufferAppend(audio: PCM16Buffer(samples: [1, 2, 3]).base64EncodedString(), eventID: "e2"),
            .inputAudioBufferCommit(),
            .inputAudioBufferClear(eventID: "e3"),
            .conversationItemCreate(item: .message(id: "item_x", role: .user, content: [.inputText("Hi")])),
            .conversationItemCreate(
                item: .functionCallOutput(id: nil, callID: "call_1", output: "{}", status: .completed), previousItemID: "item_x"
            ),
            .conversationItemCreate(item: .functionCall(id: nil, callID: "call_1", name: "get_weather", arguments: "{}")),
            .conversationItemDelete(itemID: "item_x"),
            .conversationItemRetrieve(itemID: "item_x", eventID: "e4"),
            .conversationItemTruncate(itemID: "item_x", contentIndex: 0, audioEndMs: 2500),
            .responseCreate(),
            .responseCreate(RealtimeResponseOptions(
                instructions: "Short.", outputModalities: [.text], tools: [weatherTool], toolChoice: .auto,
                conversation: .outOfBand, input: [.message(id: "item_y", role: .user, content: [.inputText("Q")])],
                metadata: ["a": "b"], voice: "ash", maxOutputTokens: .unlimited, temperature: dialect == .ga ? nil : 1.0
            )),
            .responseCancel(),
            .responseCancel(responseID: "resp_1"),
            .outputAudioBufferClear(),
            .keyPress(key: "#", eventID: "e5"),
        ]
    }

    /// The GA client events, for mutation tests.
    static var clientEvents: [RealtimeClientEvent] { clientEvents(dialect: .ga) }
}
