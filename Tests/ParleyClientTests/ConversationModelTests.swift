import Foundation
import ParleyClient
import ParleyCore
import ParleyTesting
import Testing

/// The conversation model against a real in-process Parley server, with a fake microphone
/// and speaker. Serialized: the restart test takes its port back after stopping the server.
@MainActor
@Suite(.serialized)
struct ConversationModelTests {
    @Test func aHoldToTalkTurnShowsTheCaptionThenBothSidesOfTheTurn() async throws {
        let server = try ClientTestServer.start(recognizer: ScriptedSpeechRecognizer(texts: ["hello there"]))
        let audio = FakeConversationAudio()
        let model = makeModel(server, audio: audio)
        model.connect()
        try #require(await waitUntil("connected") { model.status == .ready })

        model.beginHold()
        #expect(model.status == .listening)
        try #require(await within("the microphone is on") { await audio.waitUntilCapturing() })
        for _ in 0..<6 { audio.capture(FakeConversationAudio.tone(milliseconds: 100)) }
        await waitUntil("the live caption shows") { model.partialTranscript == "hello" }
        #expect(model.status == .listening)
        #expect(model.microphoneLevel > 0)
        for _ in 0..<4 { audio.capture(FakeConversationAudio.tone(milliseconds: 100)) }
        await waitUntil("all audio went out") { model.capturedMilliseconds == 1000 }

        model.endHold()
        #expect(model.status == .thinking)
        #expect(model.messages.isEmpty || model.messages.map(\.role) == [.user])
        await waitUntil("the answer plays") {
            model.status == .speaking && model.messages.last?.role == .agent && model.messages.last?.status == .complete
        }
        #expect(!audio.isCapturing)
        #expect(!model.isMicrophoneOn)
        #expect(model.partialTranscript == "")

        audio.finishPlayback()
        await waitUntil("the model is idle again") { model.status == .ready }
        let messages = model.messages
        try #require(messages.count == 2)
        #expect(messages[0].role == .user && messages[0].isSpoken && messages[0].status == .complete)
        #expect(messages[0].text == "hello there")
        #expect(messages[0].itemID != nil && messages[0].id.hasPrefix("local-"))
        #expect(messages[1].role == .agent && messages[1].isSpoken)
        #expect(messages[1].text == "Hello from Parley.")
        #expect(model.diagnostics.sentEvents["input_audio_buffer.commit"] == 1)
        #expect(model.diagnostics.sentEvents["response.create"] == 1)
        #expect(model.diagnostics.sentEvents["input_audio_buffer.append"] == 10)
        #expect(model.diagnostics.lastResponseStatus == .completed)
        #expect(model.error == nil)
        model.disconnect()
        await server.stop()
    }

    @Test func theAnswerToAHoldReadsWhatWasSaidEvenWhenTranscriptionIsSlow() async throws {
        let transcription = AsyncGate()
        let recognizer = ScriptedSpeechRecognizer(results: [.success("tell me a long story")], supportsPartials: false, gate: transcription)
        let server = try ClientTestServer.start(recognizer: recognizer)
        let audio = FakeConversationAudio()
        let model = makeModel(server, audio: audio)
        model.connect()
        try #require(await waitUntil("connected") { model.status == .ready })
        model.beginHold()
        try #require(await within("the microphone is on") { await audio.waitUntilCapturing() })
        for _ in 0..<5 { audio.capture(FakeConversationAudio.tone(milliseconds: 100)) }
        await waitUntil("the audio went out") { model.capturedMilliseconds == 500 }
        model.endHold()
        // The commit and response.create went out together; only then does the (slow)
        // transcription finish, and the answer must still read what was said.
        await waitUntil("the hold was sent") { model.diagnostics.sentEvents["response.create"] == 1 }
        transcription.open()
        await waitUntil("the answer began and the words arrived") {
            model.messages.count == 2 && !model.messages[1].text.isEmpty && model.messages[0].status == .complete
        }
        #expect(model.messages.first?.text == "tell me a long story")
        #expect(model.messages.last?.text.hasPrefix("This is sentence number 1") == true)
        model.disconnect()
        await server.stop()
    }

    @Test func aQuickTapReleasedWhileTheMicrophoneStartsLeavesItOff() async throws {
        let server = try ClientTestServer.start()
        let audio = FakeConversationAudio(holdsCaptureStart: true)
        let model = makeModel(server, audio: audio)
        model.connect()
        try #require(await waitUntil("connected") { model.status == .ready })

        model.beginHold()
        #expect(model.status == .listening)
        try #require(await within("the microphone is starting") { await audio.waitUntil { $0.captureStartRequests == 1 } })
        model.endHold()
        #expect(model.status == .ready)
        // The release's stop reaches the microphone before it has started: it stops nothing.
        try #require(await within("the release asked the microphone to stop") { await audio.waitUntil { $0.captureStops == 1 } })
        audio.releaseCaptureStart()
        try #require(await within("the microphone started and was stopped again") {
            await audio.waitUntil { $0.captureStarts == 1 && !$0.isCapturing }
        })
        await waitUntil("the server cleared the input") { model.diagnostics.receivedEvents["input_audio_buffer.cleared"] == 1 }
        #expect(!model.isHolding)
        #expect(!model.isMicrophoneOn)
        #expect(model.status == .ready)
        #expect(model.messages.isEmpty)
        #expect(model.diagnostics.sentEvents["input_audio_buffer.commit"] == nil)
        #expect(model.error == nil)

        // The next hold works normally.
        model.beginHold()
        try #require(await within("the microphone is on again") { await audio.waitUntilCapturing() })
        #expect(audio.record.captureStarts == 2)
        model.cancelHold()
        try #require(await within("the microphone is off") { await audio.waitUntil { !$0.isCapturing } })
        model.disconnect()
        await server.stop()
    }

    @Test func aTapReleasedInTheSameInstantNeverStartsTheMicrophone() async throws {
        let (server, audio, model) = try await connectedModel()

        model.beginHold()
        model.endHold()
        #expect(model.status == .ready)
        await waitUntil("the server cleared the input") { model.diagnostics.receivedEvents["input_audio_buffer.cleared"] == 1 }
        #expect(audio.record.captureStartRequests == 0)
        #expect(!audio.isCapturing)
        #expect(model.messages.isEmpty)
        #expect(model.error == nil)
        model.disconnect()
        await server.stop()
    }

    @Test func aHoldTooShortForWordsSettlesBackSilently() async throws {
        let (server, audio, model) = try await connectedModel()

        model.beginHold()
        try #require(await within("the microphone is on") { await audio.waitUntilCapturing() })
        audio.capture(FakeConversationAudio.tone(milliseconds: 100))
        await waitUntil("the audio went out") { model.capturedMilliseconds == 100 }
        model.endHold()
        await waitUntil("the server cleared the input") { model.diagnostics.receivedEvents["input_audio_buffer.cleared"] == 1 }
        #expect(model.status == .ready)
        #expect(model.messages.isEmpty)
        #expect(model.error == nil)
        #expect(model.diagnostics.sentEvents["input_audio_buffer.commit"] == nil)
        #expect(model.diagnostics.sentEvents["response.create"] == nil)
        #expect(!audio.isCapturing)
        model.disconnect()
        await server.stop()
    }

    @Test func aDeniedMicrophoneOffersSettingsAndNeverListens() async throws {
        let server = try ClientTestServer.start()
        let audio = FakeConversationAudio(access: .denied)
        let model = makeModel(server, audio: audio)
        model.connect()
        try #require(await waitUntil("connected") { model.status == .ready })

        model.beginHold()
        await waitUntil("the denial is shown") { model.error?.kind == .microphoneDenied }
        #expect(model.error?.opensSettings == true)
        #expect(model.microphoneAccess == .denied)
        #expect(model.status == .ready)
        #expect(!model.isHolding)

        // Known to be denied: a press does not even pretend to listen.
        model.beginHold()
        #expect(model.status == .ready)
        #expect(!model.isHolding)
        #expect(audio.record.captureStarts == 0)
        model.setHandsFree(true)
        #expect(!model.isHandsFree)

        // Typing still works.
        #expect(model.send(text: "Hi"))
        await waitUntil("the typed message is answered") { model.messages.last?.text == "Hello from Parley." }
        audio.finishPlayback()

        // Allowed in Settings: the next press listens.
        audio.setAccess(.granted)
        await model.requestMicrophoneAccess()
        #expect(model.error == nil)
        model.beginHold()
        #expect(model.status == .listening)
        try #require(await within("the microphone is on") { await audio.waitUntilCapturing() })
        model.cancelHold()
        try #require(await within("the microphone is off") { await audio.waitUntil { !$0.isCapturing } })
        model.disconnect()
        await server.stop()
    }

    @Test func aMicrophoneThatFailsMidHoldDropsListening() async throws {
        let (server, audio, model) = try await connectedModel()

        model.beginHold()
        try #require(await within("the microphone is on") { await audio.waitUntilCapturing() })
        for _ in 0..<3 { audio.capture(FakeConversationAudio.tone(milliseconds: 100)) }
        await waitUntil("the audio went out") { model.capturedMilliseconds == 300 }
        audio.breakCapture("the input device went away")
        await waitUntil("listening stops") { model.status != .listening }
        #expect(model.error?.kind == .microphoneFailed)
        #expect(model.error?.message.contains("the input device went away") == true)
        #expect(model.status == .ready)
        #expect(!model.isHolding)
        #expect(!model.isMicrophoneOn)
        #expect(model.microphoneLevel == 0)
        await waitUntil("the server cleared the input") { model.diagnostics.receivedEvents["input_audio_buffer.cleared"] == 1 }
        #expect(model.messages.isEmpty)
        #expect(model.diagnostics.sentEvents["input_audio_buffer.commit"] == nil)

        // A microphone that will not start at all is reported too.
        audio.failCaptureStart("no input device")
        model.beginHold()
        await waitUntil("the failure is shown") { model.error?.message.contains("no input device") == true }
        #expect(model.status == .ready)
        model.disconnect()
        await server.stop()
    }

    @Test func aTypedMessageIsAnsweredInTheSameThread() async throws {
        let server = try ClientTestServer.start()
        let audio = FakeConversationAudio()
        let model = makeModel(server, audio: audio)
        #expect(model.status == .disconnected)
        #expect(!model.send(text: "too early"))
        #expect(model.error?.kind == .notConnected)
        model.connect()
        try #require(await waitUntil("connected") { model.status == .ready })
        #expect(model.error == nil)

        #expect(!model.send(text: "   "))
        #expect(model.send(text: "  Hi there "))
        #expect(model.status == .thinking)
        #expect(model.messages.count == 1)
        #expect(model.messages.first?.text == "Hi there")
        #expect(model.messages.first?.isSpoken == false)
        await waitUntil("the answer plays") { model.status == .speaking }
        await waitUntil("the answer is complete") { model.messages.last?.status == .complete && model.messages.count == 2 }
        audio.finishPlayback()
        await waitUntil("idle") { model.status == .ready }
        #expect(model.messages.map(\.role) == [.user, .agent])
        #expect(model.messages.map(\.text) == ["Hi there", "Hello from Parley."])
        #expect(model.messages[0].itemID == model.messages[0].id)
        #expect((audio.record.queuedSamples[model.messages[1].id] ?? 0) > 0)
        model.disconnect()
        await server.stop()
    }

    @Test func pressingWhileTheAgentSpeaksCutsItOffAtThePlayedPosition() async throws {
        let (server, audio, model) = try await connectedModel()

        #expect(model.send(text: "Tell me a long story"))
        try #require(await within("five seconds of speech are queued") {
            await audio.waitUntil { ($0.queuedSamples.values.max() ?? 0) >= 24 * 5000 }
        })
        await waitUntil("speaking") { model.status == .speaking }
        let agentBefore = try #require(model.messages.last)
        #expect(agentBefore.role == .agent && agentBefore.status == .streaming)
        audio.setPlayed(milliseconds: 1500)
        let stopsBefore = audio.record.playbackStops

        model.beginHold()
        // At once, before any round trip: the speaker is quiet and the answer is cut.
        #expect(audio.record.playbackStops == stopsBefore + 1)
        #expect(audio.playbackPosition == nil)
        #expect(model.status == .listening)
        let agent = try #require(model.messages.first { $0.id == agentBefore.id })
        #expect(agent.status == .interrupted)
        #expect(!agent.text.isEmpty)
        #expect(agent.text.count < agentBefore.text.count)
        #expect(agentBefore.text.hasPrefix(agent.text))
        #expect(agent.text.hasPrefix("This is sentence number 1 of a very long story."))
        #expect(model.diagnostics.sentEvents["response.cancel"] == 1)
        #expect(model.diagnostics.sentEvents["conversation.item.truncate"] == 1)

        await waitUntil("the server confirms the cut") {
            model.diagnostics.lastTruncation == PlaybackPosition(itemID: agentBefore.id, playedMilliseconds: 1500)
                && model.diagnostics.lastResponseStatus == .cancelled
        }
        #expect(model.messages.first { $0.id == agentBefore.id }?.text == agent.text)
        #expect(model.error == nil)
        model.cancelHold()
        try #require(await within("the microphone is off") { await audio.waitUntil { $0.captureStarts == 1 && !$0.isCapturing } })
        model.disconnect()
        await server.stop()
    }

    @Test func theModelReconnectsAfterTheServerRestarts() async throws {
        var server = try ClientTestServer.start()
        let port = server.port
        let audio = FakeConversationAudio()
        let tokens = TokenDispenser()
        let model = makeModel(server, audio: audio, tokens: tokens)
        model.connect()
        try #require(await waitUntil("connected") { model.status == .ready })
        #expect(model.send(text: "Hi"))
        await waitUntil("answered") { model.messages.count == 2 && model.messages[1].status == .complete }
        audio.finishPlayback()

        await server.stop()
        await waitUntil("the loss is noticed") { model.status == .disconnected || model.status == .connecting }
        await waitUntil("the loss is explained") { model.error?.kind == .connection }
        #expect(!model.send(text: "while down"))

        server = try ClientTestServer.start(port: port)
        await waitUntil("reconnected") { model.status == .ready }
        #expect(model.diagnostics.sessionsOpened == 2)
        #expect(model.error == nil)
        #expect(tokens.calls == 1, "the cached token is still good")
        #expect(model.send(text: "Hi again"))
        await waitUntil("answered again") { model.messages.count == 4 && model.messages[3].status == .complete }
        #expect(model.messages.map(\.text) == ["Hi", "Hello from Parley.", "Hi again", "Hello from Parley."])
        model.disconnect()
        await server.stop()
    }

    @Test func aRefusedTokenIsReplacedByAFreshOne() async throws {
        let server = try ClientTestServer.start()
        let tokens = TokenDispenser(badTokensFirst: 1)
        let model = makeModel(server, audio: FakeConversationAudio(), tokens: tokens)
        model.connect()
        try #require(await waitUntil("connected") { model.status == .ready })
        #expect(tokens.calls == 2)
        #expect(model.diagnostics.sessionsOpened == 1)
        #expect(model.error == nil)
        model.disconnect()
        await server.stop()
    }

    @Test func handsFreeTurnsEndWhenThePersonStopsTalking() async throws {
        let (server, audio, model) = try await connectedModel()

        model.setHandsFree(true)
        #expect(model.isHandsFree)
        try #require(await within("the microphone is on") { await audio.waitUntilCapturing() })
        await waitUntil("server turn detection is on") { model.diagnostics.receivedEvents["session.updated"] == 2 }
        // Quiet, then a tone the energy detector takes for speech, then quiet that ends the turn.
        for _ in 0..<5 { audio.capture([Int16](repeating: 0, count: 2400)) }
        for _ in 0..<8 { audio.capture(FakeConversationAudio.tone(milliseconds: 100)) }
        await waitUntil("the server hears speech") { model.status == .listening }
        for _ in 0..<10 { audio.capture([Int16](repeating: 0, count: 2400)) }
        await waitUntil("the turn is answered") {
            model.messages.map(\.role) == [.user, .agent] && model.messages.last?.status == .complete
        }
        #expect(model.messages.first?.text == "hello there")
        #expect(model.diagnostics.sentEvents["input_audio_buffer.commit"] == nil)
        #expect(model.diagnostics.sentEvents["response.create"] == nil)

        model.setHandsFree(false)
        try #require(await within("the microphone is off") { await audio.waitUntil { !$0.isCapturing } })
        await waitUntil("manual turns again") { model.diagnostics.receivedEvents["session.updated"] == 3 }
        model.disconnect()
        await server.stop()
    }
}
