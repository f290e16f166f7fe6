import Foundation
import ParleyCore
import ParleyNet
import ParleyServer
import ParleyStore
import ParleyTesting
import Testing

/// Phone calls end to end: a simulated Twilio (`TwilioTestCall`) on a real socket against a
/// real server with the deterministic providers, following Twilio's message sequence.
@Suite struct TwilioCallTests {
    /// The server's log lines, to find each call's conversation. `@unchecked Sendable`: `lines` is guarded by `lock`.
    final class LogLines: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [JSONValue] = []
        var log: EventLog { EventLog { [self] line in if let json = try? JSONValue(parsing: line) { lock.withLock { lines.append(json) } } } }
        func conversation(ofCall callSID: String) -> String? {
            lock.withLock {
                lines.first { $0["event"]?.stringValue == "twilio.call_started" && $0["session"]?.stringValue == callSID }?["conversation"]?.stringValue
            }
        }
        func events(_ name: String) -> [JSONValue] { lock.withLock { lines.filter { $0["event"]?.stringValue == name } } }
    }

    /// The test providers; the caller's words are `heard` (a long story makes a long answer).
    static func providers(heard: String = "hello there") -> ProviderSet {
        ProviderSet(
            recognizer: FixedSpeechRecognizer(text: heard), languageModel: KeywordLanguageModel(),
            synthesizer: ScriptedSpeechSynthesizer(millisecondsPerWord: 100),
            makeVoiceActivityDetector: { EnergyVAD() },
            makeResampler: { from, to in try! LinearResampler(from: from, to: to) }
        )
    }

    static func newCallSID() -> String { "CA" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased() }

    /// Answers a call through the webhook and opens its stream.
    static func placeCall(_ server: TestServer, query: String = "", playedMarks: Int = .max) async throws -> TwilioTestCall {
        let callSID = newCallSID()
        let answer = try await TwilioTestCall.answer(server, form: TwilioTestCall.callForm(callSID: callSID), query: query)
        #expect(answer.status == 200, "\(answer.body)")
        return try await TwilioTestCall.connect(answer, callSID: callSID, playedMarks: playedMarks)
    }

    /// The call's stored conversation, read once the server has closed the stream.
    static func storedItems(_ server: TestServer, _ logs: LogLines, call: TwilioTestCall) async throws -> [ChatMessage] {
        let conversationID = try #require(logs.conversation(ofCall: call.callSID))
        return try await server.app.context.store.items(conversationID: conversationID).map(\.message)
    }

    @Test func aSpokenQuestionInMuLawGetsASpokenAnswerInMuLaw() async throws {
        let logs = LogLines()
        let server = try TestServer.start(providers: Self.providers(), log: logs.log)
        let call = try await Self.placeCall(server)
        try call.sendAudio(TelephoneAudio.question())
        let media = try #require(await call.next("media"))
        #expect(media["streamSid"]?.stringValue == call.streamSID)
        // "Hello from Parley." is 300 ms of speech: 2,400 μ-law bytes at 8 kHz, give or take the resampler's edges.
        #expect(await call.next("mark") != nil)
        while try await call.receivedAudio.count < 2_300 {
            try #require(await call.next("media", seconds: 10) != nil, "the answer's audio stopped short")
        }
        let audio = try await call.receivedAudio
        let decoded = G711.decode(audio, law: .muLaw)
        #expect(TwilioTestCall.peak(decoded) > 1_000, "the answer is audible")
        // The caller hangs up once the whole answer has played: its last mark echoed.
        var played = 0.0
        while played < Double(audio.count) {
            guard case .number(let bytes)? = await call.next("played", seconds: 10)?["bytes"] else { break }
            played = bytes
        }
        #expect(played >= Double(audio.count), "the last mark was not echoed")
        try call.hangUp()
        #expect(await call.closes())
        let items = try await Self.storedItems(server, logs, call: call)
        #expect(items.first == .user("hello there"))
        #expect(items.last == .assistant(text: "Hello from Parley.", toolCalls: [], interrupted: false), "\(items)")
        // The operator console sees the phone call and its turn's figures.
        let conversationID = try #require(logs.conversation(ofCall: call.callSID))
        let store = server.app.context.store
        #expect(try await store.calls(conversationID: conversationID).map(\.door) == ["twilio"])
        #expect(await ResourceProbe.eventually(within: 10) {
            let figures = (try? await store.turnFigures(conversationID: conversationID)) ?? []
            return figures.count == 1 && figures[0].silenceWindowMs == 300 && figures[0].firstAudioMs != nil
        })
        await server.stop()
    }

    @Test func endCallClosesTheStreamOnceTheGoodbyeWasHeard() async throws {
        let logs = LogLines()
        var providers = Self.providers()
        providers.languageModel = ScriptedLanguageModel(replies: [
            .toolCalls([ToolCall(id: "call_end_1", name: "end_call", arguments: #"{"reason":"the caller is done"}"#)]),
            .text("Goodbye, and thank you."),
        ])
        let server = try TestServer.start(providers: providers, log: logs.log)
        let call = try await Self.placeCall(server)
        try call.sendAudio(TelephoneAudio.question())
        // The simulated Twilio plays every mark; the server closes the stream after the last one, and Twilio hangs up.
        #expect(await call.closes(within: 15), "the stream stayed open")
        #expect(logs.events("twilio.end_call").count == 1)
        let decoded = G711.decode(try await call.receivedAudio, law: .muLaw)
        #expect(TwilioTestCall.peak(decoded) > 1_000, "the goodbye was not sent")
        let items = try await Self.storedItems(server, logs, call: call)
        // A slow turn (a loaded machine) may open the goodbye with the agent's filler line.
        let goodbye = items.contains { item in
            if case .assistant(let text, [], false) = item { text.hasSuffix("Goodbye, and thank you.") } else { false }
        }
        #expect(goodbye, "\(items)")
        await server.stop()
    }

    @Test func transferCallDialsTheTargetWhenTwilioAsksAfterTheStream() async throws {
        let logs = LogLines()
        var providers = Self.providers()
        providers.languageModel = ScriptedLanguageModel(replies: [
            .toolCalls([ToolCall(id: "call_transfer_1", name: "transfer_call", arguments: #"{"target":"+15005550007"}"#)]),
            .text("Transferring you now. Goodbye."),
        ])
        let server = try TestServer.start(providers: providers, log: logs.log)
        let call = try await Self.placeCall(server)
        try call.sendAudio(TelephoneAudio.question())
        #expect(await call.closes(within: 15), "the stream stayed open after the goodbye")
        // Twilio then asks the <Connect action> what next, signed: the transfer, once; then a hang-up.
        let form = [("AccountSid", "AC0123456789abcdef0123456789abcdef"), ("CallSid", call.callSID), ("CallStatus", "in-progress")]
        let next = try await TwilioTestCall.post(server, path: "/v1/telephony/twilio/stream-ended", form: form)
        #expect(next.contains("<Dial>+15005550007</Dial>"), "\(next)")
        let after = try await TwilioTestCall.post(server, path: "/v1/telephony/twilio/stream-ended", form: form)
        #expect(after.contains("<Hangup/>"), "\(after)")
        let unsigned = try await TwilioTestCall.post(server, path: "/v1/telephony/twilio/stream-ended", form: form, authToken: "not-the-token")
        #expect(unsigned.contains("invalid_signature"), "\(unsigned)")
        #expect(logs.events("twilio.transferred").count == 1)
        await server.stop()
    }

    /// What a caller heard of the long story after `milliseconds` of it: each sentence is ten
    /// words of 100 ms; the stored reply keeps whole sentences and the words of the one in
    /// progress in proportion to how much of it played.
    static func story(heardMs milliseconds: Int) -> String {
        let whole = (0..<milliseconds / 1000).map { "This is sentence number \($0 + 1) of a very long story." }
        let words = "This is sentence number \(milliseconds / 1000 + 1) of a very long story.".split(separator: " ").prefix(milliseconds % 1000 / 100)
        return (whole + (words.isEmpty ? [] : [words.joined(separator: " ")])).joined(separator: " ")
    }

    /// A call asking for the long story whose Twilio plays `playedMarks` chunks of the answer
    /// and holds the rest; returns once `heldMarks` more marks have arrived, with what played.
    static func longStoryCall(playedMarks: Int, heldMarks: Int) async throws -> (TestServer, LogLines, TwilioTestCall, playedMs: Int) {
        let logs = LogLines()
        let server = try TestServer.start(providers: Self.providers(heard: "tell me a long story"), log: logs.log)
        let call = try await Self.placeCall(server, playedMarks: playedMarks)
        try call.sendAudio(TelephoneAudio.question())
        for _ in 1...(playedMarks + heldMarks) { try #require(await call.next("mark") != nil) }
        return (server, logs, call, await call.playedMilliseconds)
    }

    @Test func bargeInSendsClearBeforeAnyFurtherMediaAndStoresWhatWasPlayed() async throws {
        // Twilio plays the first 37 chunks (a sentence and a half), then the caller talks over the rest.
        let (server, logs, call, playedMs) = try await Self.longStoryCall(playedMarks: 37, heldMarks: 3)
        #expect((1_100..<1_900).contains(playedMs), "played \(playedMs) ms")
        // Over 900 ms of speech interrupts once its words so far are known (InterruptionPolicy).
        try call.sendAudio(TelephoneAudio.speech(milliseconds: 1_200))
        #expect(await call.next("clear") != nil)
        try call.hangUp()
        #expect(await call.closes())
        let messages = await call.received.all.compactMap { $0["event"]?.stringValue }
        let clearIndex = try #require(messages.firstIndex(of: "clear"))
        #expect(!messages[clearIndex...].contains("media"), "media after clear: \(messages[clearIndex...])")
        #expect(messages.filter { $0 == "clear" }.count == 1)
        let items = try await Self.storedItems(server, logs, call: call)
        let reply = try #require(items.first { if case .assistant = $0 { true } else { false } })
        #expect(reply == .assistant(text: Self.story(heardMs: playedMs), toolCalls: [], interrupted: true), "\(logs.events("twilio.playback_cleared"))")
        await server.stop()
    }

    @Test func aCallerWhoHangsUpMidReplyIsStoredAsHavingHeardUpToTheLastEchoedMark() async throws {
        let (server, logs, call, playedMs) = try await Self.longStoryCall(playedMarks: 12, heldMarks: 2)
        try call.hangUp()
        #expect(await call.closes())
        let items = try await Self.storedItems(server, logs, call: call)
        let reply = try #require(items.first { if case .assistant = $0 { true } else { false } })
        #expect(reply == .assistant(text: Self.story(heardMs: playedMs), toolCalls: [], interrupted: true), "\(logs.events("twilio.playback_cleared")) \(items)")
        #expect(!Self.story(heardMs: playedMs).isEmpty)
        await server.stop()
    }

    @Test func aKeyPressIsLoggedAndWhenTheAgentAsksBecomesAUserMessage() async throws {
        let logs = LogLines()
        let server = try TestServer.start(providers: Self.providers(), log: logs.log)
        let agent = try await server.request("POST", "/v1/agents", json: #"{"name":"Phone menu","telephony":{"key_press_messages":true}}"#)
        let agentID = try #require(agent.body["id"]?.stringValue)
        let call = try await Self.placeCall(server, query: "?agent=\(agentID)")
        try call.sendAudio(TelephoneAudio.lineNoise(milliseconds: 100))
        try call.press("3")
        #expect(await call.next("media") != nil, "the agent answers the key press")
        try call.hangUp()
        #expect(await call.closes())
        #expect(logs.events("twilio.dtmf").count == 1)
        #expect(logs.events("twilio.dtmf").first?["digit"] == nil, "a key press reached the log")
        let items = try await Self.storedItems(server, logs, call: call)
        #expect(items.first == .user("The caller pressed 3."))
        // The caller hangs up right after the answer's first media: the answer is stored as far
        // as its echoed marks say it was heard (the whole of it only when every mark came back).
        let answer = items.compactMap { if case .assistant(let text, [], let interrupted) = $0 { (text, interrupted) } else { nil } }.first
        #expect(answer.map { "Hello from Parley.".hasPrefix($0.0) && ($0.1 || $0.0 == "Hello from Parley.") } == true, "\(items)")
        await server.stop()
    }

    @Test func aPushToTalkAgentTakesTurnsBySilenceOnThePhone() async throws {
        let server = try TestServer.start(providers: Self.providers())
        let agent = try await server.request("POST", "/v1/agents", json: #"{"name":"Walkie","manual_turns":true}"#)
        let call = try await Self.placeCall(server, query: "?agent=\(try #require(agent.body["id"]?.stringValue))")
        try call.sendAudio(TelephoneAudio.question())
        #expect(await call.next("media") != nil)
        try call.hangUp()
        #expect(await call.closes())
        await server.stop()
    }

    @Test func theCalledNumberChoosesTheAgent() async throws {
        let logs = LogLines()
        let server = try TestServer.start(providers: Self.providers(), log: logs.log)
        let agent = try await server.request("POST", "/v1/agents", json: #"{"name":"Reception","telephony":{"phone_numbers":["+15005550006"]}}"#)
        let agentID = try #require(agent.body["id"]?.stringValue)
        let bad = try await server.request("POST", "/v1/agents", json: #"{"name":"Typo","telephony":{"phone_numbers":["555-0100"]}}"#)
        #expect(bad.status == 400)
        for (to, expected) in [("+15005550006", agentID), ("+15005550007", "default")] {
            let answer = try await TwilioTestCall.answer(server, form: TwilioTestCall.callForm(callSID: Self.newCallSID(), to: to))
            #expect(answer.status == 200)
            #expect(logs.events("twilio.call_answered").last?["agent"]?.stringValue == expected)
        }
        let unknown = try await TwilioTestCall.answer(server, form: TwilioTestCall.callForm(callSID: Self.newCallSID()), query: "?agent=agent_nope")
        #expect(unknown.status == 404)
        await server.stop()
    }

    @Test func signaturesAreCheckedWhenAnAuthTokenIsConfigured() async throws {
        let authToken = "0123456789abcdef0123456789abcdef"
        let server = try TestServer.start(providers: Self.providers()) { settings in
            settings.telephony.twilioAuthToken = authToken
            settings.telephony.publicURL = URL(string: "https://voice.example.com")
        }
        let form = TwilioTestCall.callForm(callSID: Self.newCallSID())
        let signed = try await TwilioTestCall.answer(server, form: form, authToken: authToken, signedURLBase: "https://voice.example.com")
        #expect(signed.status == 200, "\(signed.body)")
        #expect(signed.streamURL == "wss://voice.example.com/v1/telephony/twilio/stream")
        #expect(signed.body.contains(#"<Connect action="https://voice.example.com/v1/telephony/twilio/stream-ended"><Stream"#), "\(signed.body)")
        let wrongKey = try await TwilioTestCall.answer(server, form: form, authToken: "not-the-token", signedURLBase: "https://voice.example.com")
        #expect(wrongKey.status == 403)
        let wrongURL = try await TwilioTestCall.answer(server, form: form, authToken: authToken, signedURLBase: "https://elsewhere.example.com")
        #expect(wrongURL.status == 403)
        let unsigned = try await TwilioTestCall.answer(server, form: form, authToken: nil)
        #expect(unsigned.status == 403)
        var tampered = form
        tampered[2].1 = Self.newCallSID()
        let tamperedAnswer = try await TwilioTestCall.answer(
            server, form: tampered, signature: TwilioTestCall.sign(url: "https://voice.example.com/v1/telephony/twilio/voice", form: form, authToken: authToken)
        )
        #expect(tamperedAnswer.status == 403)
        await server.stop()
    }

    @Test func streamsWithoutAValidSingleUseTokenAreRefused() async throws {
        let server = try TestServer.start(providers: Self.providers())
        let callSID = Self.newCallSID()
        let answer = try await TwilioTestCall.answer(server, form: TwilioTestCall.callForm(callSID: callSID))
        for token: String? in [nil, "forged-token"] {
            let call = try await TwilioTestCall.connect(answer, callSID: callSID, token: .some(token))
            #expect(await call.closes())
            #expect(call.socket.closeCode == WebSocketCloseCode.policyViolation)
        }
        // Another call's token does not open this call's stream.
        let otherSID = Self.newCallSID()
        let other = try await TwilioTestCall.answer(server, form: TwilioTestCall.callForm(callSID: otherSID))
        let mismatched = try await TwilioTestCall.connect(other, callSID: callSID)
        #expect(await mismatched.closes())
        // Used once (even by the wrong call), the token is gone; a fresh one works once.
        let fresh = try await TwilioTestCall.answer(server, form: TwilioTestCall.callForm(callSID: callSID))
        let first = try await TwilioTestCall.connect(fresh, callSID: callSID)
        try first.sendAudio(TelephoneAudio.question())
        #expect(await first.next("media") != nil)
        let reused = try await TwilioTestCall.connect(fresh, callSID: callSID)
        #expect(await reused.closes())
        #expect(reused.socket.closeCode == WebSocketCloseCode.policyViolation)
        try first.hangUp()
        #expect(await first.closes())
        await server.stop()
    }

    @Test(arguments: [
        "{not json",
        #"{"no_event":true}"#,
        #"{"event":"media","media":{"track":"inbound"}}"#,
        #"{"event":"media","media":{"track":"inbound","payload":"@@not base64@@"}}"#,
        #"{"event":"mark"}"#,
        #"{"event":"dtmf","dtmf":{"digit":"pressed"}}"#,
        #"[1,2,3]"#,
    ])
    func malformedMessagesCloseTheCallCleanlyAndOtherCallsGoOn(message: String) async throws {
        let server = try TestServer.start(providers: Self.providers())
        let bystander = try await Self.placeCall(server)
        let call = try await Self.placeCall(server)
        try call.sendAudio(TelephoneAudio.lineNoise(milliseconds: 200))
        try call.socket.send(.text(message))
        #expect(await call.closes())
        #expect(call.socket.closeCode == WebSocketCloseCode.policyViolation)
        try bystander.sendAudio(TelephoneAudio.question())
        #expect(await bystander.next("media") != nil, "the other call still gets its answer")
        try bystander.hangUp()
        #expect(await bystander.closes())
        await server.stop()
    }

    @Test func aStreamThatNeverStartsIsClosed() async throws {
        let server = try TestServer.start(providers: Self.providers()) { $0.telephony.streamStartTimeout = .milliseconds(200) }
        let socket = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(server.port)/v1/telephony/twilio/stream")!)
        try socket.send(.text(#"{"event":"connected","protocol":"Call","version":"1.0.0"}"#))
        #expect(await socket.closes())
        #expect(socket.closeCode == WebSocketCloseCode.policyViolation)
        await server.stop()
    }

    @Test func aStreamThatDoesNotStartWithStartOrIsNotMuLawIsRefused() async throws {
        let server = try TestServer.start(providers: Self.providers())
        let callSID = Self.newCallSID()
        let answer = try await TwilioTestCall.answer(server, form: TwilioTestCall.callForm(callSID: callSID))
        let socket = try await WebSocketClient.connect(to: try #require(answer.streamURL.flatMap(URL.init(string:))))
        try socket.send(.text(#"{"event":"media","media":{"payload":"AAAA"}}"#))
        #expect(await socket.closes())
        #expect(socket.closeCode == WebSocketCloseCode.policyViolation)
        let linear = try await TwilioTestCall.connect(answer, callSID: callSID, mediaFormat: "audio/l16")
        #expect(await linear.closes())
        #expect(linear.socket.closeCode == WebSocketCloseCode.policyViolation)
        await server.stop()
    }
}

extension TwilioTestCall {
    /// The largest magnitude in `samples`.
    static func peak(_ samples: [Int16]) -> Int { samples.map { abs(Int($0)) }.max() ?? 0 }
}
