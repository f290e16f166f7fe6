import Foundation
import Testing
import ParleyCore
import ParleyTesting

/// Speech over a speaking agent, end to end through a session: backchannels and noise leave it
/// talking, meant interruptions stop it, and the stored reply keeps what was heard.
@Suite struct InterruptionSessionTests {
    /// Ten words: two seconds of the scripted synthesizer's audio.
    static let longReply = "One two three four five six seven eight nine ten."

    static let paused: @Sendable (VoiceSessionEvent) -> Bool = { if case .outputAudioPaused = $0 { true } else { false } }
    static let resumed: @Sendable (VoiceSessionEvent) -> Bool = { if case .outputAudioResumed = $0 { true } else { false } }
    static let decided: @Sendable (VoiceSessionEvent) -> Bool = { if case .interruptionDecided = $0 { true } else { false } }
    static let speechStarted: @Sendable (VoiceSessionEvent) -> Bool = { if case .speechStarted = $0 { true } else { false } }
    static let committed: @Sendable (VoiceSessionEvent) -> Bool = { if case .inputCommitted = $0 { true } else { false } }

    /// Asks a question and waits until the agent's reply has been sent (it goes on playing for
    /// the length of its audio, in input time).
    func askAndWaitForTheReply(_ session: VoiceSession, _ recorder: SessionRecorder, status: ResponseStatus? = .completed) async throws {
        try await ScenarioAudio.ask(session, pauseMs: 700)
        if let status {
            #expect(await recorder.waitFor(Match.responseDone(status)))
        } else {
            #expect(await recorder.waitFor(Match.audio))
        }
    }

    /// The decision the session reported.
    func decision(_ recorder: SessionRecorder) async -> (interrupts: Bool, reason: InterruptionPolicy.Reason, words: String?)? {
        let decisions: [(interrupts: Bool, reason: InterruptionPolicy.Reason, words: String?)] = await recorder.events.compactMap { event in
            if case .interruptionDecided(_, _, let interrupts, let reason, let words) = event { (interrupts, reason, words) } else { nil }
        }
        return decisions.first
    }

    /// Speech over the agent that asks for nothing: a backchannel, or words the recognizer was
    /// sure of none of (Whisper tiny.en heard a "sure" said over the agent as "Share.", at 0.5).
    @Test(arguments: [
        ("Mm-hmm.", nil, InterruptionPolicy.Reason.backchannel),
        ("Share.", 0.5, .unclearWords),
    ] as [(String, Float?, InterruptionPolicy.Reason)])
    func speechThatAsksForNothingPausesThenResumesTheAgentAndIsNoTurn(
        heard: String, wordConfidence: Float?, reason: InterruptionPolicy.Reason
    ) async throws {
        let recognizer = ScriptedSpeechRecognizer(texts: ["What time is it?", heard], wordConfidence: wordConfidence)
        let (session, recorder) = makeSession(recognizer: recognizer, model: ScriptedLanguageModel(replies: [.text(Self.longReply)]))
        try await askAndWaitForTheReply(session, recorder)
        // Half a second of speech while the two seconds of reply play.
        try await session.appendAudio(ScenarioAudio.speech(milliseconds: 500), sampleRate: 16_000)
        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 600), sampleRate: 16_000)
        #expect(await recorder.waitFor(Self.resumed))
        let verdict = await decision(recorder)
        #expect(verdict?.interrupts == false && verdict?.reason == reason && verdict?.words == heard)
        #expect(await recorder.count(Self.paused) == 1)
        #expect(await recorder.count(Self.speechStarted) == 1)
        #expect(await recorder.count(Self.committed) == 1)
        #expect(await session.ledger.messages == [.user("What time is it?"), .assistant(text: Self.longReply, toolCalls: [], interrupted: false)])
    }

    @Test func aCoughWhileTheAgentSpeaksChangesNothing() async throws {
        let (session, recorder) = makeSession(model: ScriptedLanguageModel(replies: [.text(Self.longReply)]))
        try await askAndWaitForTheReply(session, recorder)
        try await session.appendAudio(ScenarioAudio.speech(milliseconds: 120), sampleRate: 16_000)
        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 3_000), sampleRate: 16_000)
        // Past the end of the reply: a question is a turn again.
        try await ScenarioAudio.ask(session, pauseMs: 700)
        #expect(await recorder.waitFor(Self.committed, count: 2))
        #expect(await recorder.count(Self.paused) == 0)
        #expect(await recorder.count(Self.decided) == 0)
        #expect(await recorder.count(Self.speechStarted) == 2)
        #expect(await session.ledger.messages.prefix(2) == [.user("What time is it?"), .assistant(text: Self.longReply, toolCalls: [], interrupted: false)])
    }

    @Test func aShortWordedInterruptionStopsTheAgentAndBecomesTheTurn() async throws {
        // The reply hangs after its first sentence, so it is still in progress when interrupted.
        let model = ScriptedLanguageModel(replies: [ScriptedLanguageModel.Reply([.text("Sure, here goes. "), .text("The first part"), .hang]), .text("Okay.")])
        let recognizer = ScriptedSpeechRecognizer(texts: ["What time is it?", "Wait.", "Wait."])
        let (session, recorder) = makeSession(recognizer: recognizer, model: model)
        try await askAndWaitForTheReply(session, recorder, status: nil)
        try await session.appendAudio(ScenarioAudio.speech(milliseconds: 500), sampleRate: 16_000)
        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 700), sampleRate: 16_000)
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        let verdict = await decision(recorder)
        #expect(verdict?.interrupts == true && verdict?.reason == .words)
        let kinds = await recorder.events.map(EventKind.init)
        // The user's turn is announced before the response it cut off ends.
        let secondStart = try #require(kinds.indices.filter { kinds[$0] == .speechStarted }.dropFirst().first)
        let cancelled = try #require(await recorder.events.firstIndex(where: Match.responseDone(.cancelled)))
        #expect(secondStart < cancelled)
        #expect(kinds.firstIndex(of: .outputAudioPaused).map { $0 < secondStart } == true)
        let messages = await session.ledger.messages
        #expect(messages.count == 4)
        #expect(messages.dropFirst(2) == [.user("Wait."), .assistant(text: "Okay.", toolCalls: [], interrupted: false)])
        guard case .assistant(let heard, _, true)? = messages.dropFirst().first else {
            Issue.record("expected the interrupted reply, got \(messages)")
            return
        }
        #expect("Sure, here goes.".hasPrefix(heard))
    }

    @Test func longSpeechAfterTheReplyWasSentStillCutsItToWhatWasHeard() async throws {
        let model = ScriptedLanguageModel(replies: [.text(Self.longReply), .text("Okay.")])
        // The words are transcribed twice: so far, at the backchannel length, then as the turn.
        let recognizer = ScriptedSpeechRecognizer(texts: ["What time is it?", "Actually tell me a joke.", "Actually tell me a joke."])
        let (session, recorder) = makeSession(recognizer: recognizer, model: model)
        try await askAndWaitForTheReply(session, recorder)
        // The listener hears 600 ms of the reply (three words) before talking over it.
        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 600), sampleRate: 16_000)
        try await session.appendAudio(ScenarioAudio.speech(milliseconds: 1_200), sampleRate: 16_000)
        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 700), sampleRate: 16_000)
        #expect(await recorder.waitFor(Match.responseDone(.completed), count: 2))
        let verdict = await decision(recorder)
        #expect(verdict?.interrupts == true && verdict?.reason == .longSpeech && verdict?.words == "Actually tell me a joke.")
        let messages = await session.ledger.messages
        #expect(messages.count == 4)
        guard case .assistant(let heard, _, true)? = messages.dropFirst().first else {
            Issue.record("expected the reply cut to what was heard, got \(messages)")
            return
        }
        #expect(heard == "One two three")
    }

    @Test func eachSessionTunesWhatCountsAsABackchannel() async throws {
        var configuration = VoiceSessionConfiguration()
        configuration.interruption = InterruptionSettings(maximumBackchannelMs: 400, backchannels: ["carry on"])
            .applied(to: configuration.interruption)
        let model = ScriptedLanguageModel(replies: [.text(Self.longReply), .text("Okay.")])
        let recognizer = ScriptedSpeechRecognizer(texts: ["What time is it?", "Carry on.", "Yeah go on then.", "Yeah go on then."])
        let (session, recorder) = makeSession(recognizer: recognizer, model: model, configuration: configuration)
        try await askAndWaitForTheReply(session, recorder)
        // "Carry on." (300 ms) is this session's backchannel; 500 ms of speech is past its 400 ms limit.
        try await session.appendAudio(ScenarioAudio.speech(milliseconds: 300), sampleRate: 16_000)
        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 400), sampleRate: 16_000)
        #expect(await recorder.waitFor(Self.resumed))
        try await session.appendAudio(ScenarioAudio.speech(milliseconds: 500), sampleRate: 16_000)
        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 700), sampleRate: 16_000)
        #expect(await recorder.waitFor(Match.responseDone(.completed), count: 2))
        let reasons = await recorder.events.compactMap { event in
            if case .interruptionDecided(_, _, _, let reason, _) = event { reason } else { nil }
        }
        #expect(reasons == [.backchannel, .longSpeech])
    }

    @Test func withoutInterruptResponseSpeechOverTheAgentIsAnOrdinaryTurn() async throws {
        var configuration = VoiceSessionConfiguration()
        configuration.turnDetection?.interruptResponse = false
        let recognizer = ScriptedSpeechRecognizer(texts: ["What time is it?", "Mm-hmm."])
        let model = ScriptedLanguageModel(replies: [.text(Self.longReply), .text("Yes?")])
        let (session, recorder) = makeSession(recognizer: recognizer, model: model, configuration: configuration)
        try await askAndWaitForTheReply(session, recorder)
        try await session.appendAudio(ScenarioAudio.speech(milliseconds: 500), sampleRate: 16_000)
        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 700), sampleRate: 16_000)
        #expect(await recorder.waitFor(Match.responseDone(.completed), count: 2))
        #expect(await recorder.count(Self.paused) == 0)
        #expect(await recorder.count(Self.decided) == 0)
        #expect(await session.ledger.messages.dropFirst(2).first == .user("Mm-hmm."))
    }
}
