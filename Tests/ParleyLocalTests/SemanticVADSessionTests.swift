import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyLocal

/// `semantic_vad` in a real session: the Silero VAD and the Smart Turn model hear flite's
/// speech, fed in audio time; the words and the replies are scripted. Every time compared is
/// audio time (`audio_end_ms`), never the wall clock.
@Suite struct SemanticVADSessionTests {
    /// Said the same way by flite whatever it said before, and far from every eagerness'
    /// threshold (scores 0.97–0.98 and 0.03 with a 200 ms pause).
    static let question = "What time is it in Tokyo right now?"
    static let unfinished = "So what I was thinking is that we could"
    static let continuation = "go to the beach on Saturday morning."

    @Test func aCompleteQuestionEndsTheTurnSoonerThanTheSilenceWindow() async throws {
        var ends: [Int] = []
        var questionEndMs = 0
        for eagerness in [nil, .auto] as [ServerVADSettings.Eagerness?] {
            let (session, recorder) = try SemanticSession.make(eagerness: eagerness)
            var input = SpokenInput(session)
            try await input.pause(milliseconds: 300)
            questionEndMs = try await input.say(Self.question)
            try await input.pause(milliseconds: 1_000)
            #expect(await recorder.waitFor(Match.responseDone(.completed)))
            let stops = await recorder.events.compactMap(Match.speechStoppedMs)
            try #require(stops.count == 1, "stops: \(stops)")
            ends.append(stops[0])
            if eagerness != nil {
                let verdicts = await recorder.events.compactMap(Match.verdict)
                #expect(verdicts.count == 1 && verdicts[0].endsTurn && verdicts[0].probability > 0.5, "\(verdicts)")
            }
        }
        let (silenceWindowEnd, semanticEnd) = (ends[0], ends[1])
        print("After a complete question: server_vad ended the turn \(silenceWindowEnd - questionEndMs) ms after flite's clip, semantic_vad (auto) \(semanticEnd - questionEndMs) ms")
        #expect(semanticEnd < silenceWindowEnd, "server_vad ended at \(silenceWindowEnd) ms, semantic_vad at \(semanticEnd) ms")
        #expect(semanticEnd - questionEndMs < 300, "semantic_vad ended \(semanticEnd - questionEndMs) ms after the question")
    }

    @Test(arguments: [ServerVADSettings.Eagerness.low, .auto])
    func aMidThoughtPauseIsNotCutOff(eagerness: ServerVADSettings.Eagerness) async throws {
        // The recognizer hears the words said before the pause, which leave the thought open.
        let (session, recorder) = try SemanticSession.make(eagerness: eagerness, heard: Self.unfinished)
        var input = SpokenInput(session)
        try await input.pause(milliseconds: 300)
        try await input.say(Self.unfinished)
        // The pause is judged while the person is still pausing, and found unfinished.
        let verdict = try await input.pauseForVerdict(recorder)
        #expect(!verdict.endsTurn, "probability \(verdict.probability)")

        try await input.pause(milliseconds: 1_000 - SpokenInput.judgedPauseMs)
        let continuationEndMs = try await input.say(Self.continuation)
        _ = try await input.pauseForVerdict(recorder)
        try await input.pause(milliseconds: eagerness.completionCheck.maximumSilenceMs)
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        let stops = await recorder.events.compactMap(Match.speechStoppedMs)
        #expect(stops.count == 1 && stops[0] > continuationEndMs, "stops \(stops), continuation ended at \(continuationEndMs) ms")
        #expect(await recorder.count { if case .speechStarted = $0 { true } else { false } } == 1)
    }

    @Test func highEagernessEndsAPauseSoonerThanLow() async throws {
        var ends: [ServerVADSettings.Eagerness: Int] = [:]
        var unfinishedEndMs = 0
        for eagerness in [ServerVADSettings.Eagerness.high, .low] {
            // Words that say nothing either way: the audio model alone sets the wait.
            let (session, recorder) = try SemanticSession.make(eagerness: eagerness, heard: Self.unfinished)
            var input = SpokenInput(session)
            try await input.pause(milliseconds: 300)
            unfinishedEndMs = try await input.say(Self.unfinished)
            _ = try await input.pauseForVerdict(recorder)
            try await input.pause(milliseconds: 8_500)
            #expect(await recorder.waitFor(Match.isSpeechStopped))
            let stops = await recorder.events.compactMap(Match.speechStoppedMs)
            let end = try #require(stops.first)
            ends[eagerness] = end
        }
        let high = try #require(ends[.high]) - unfinishedEndMs, low = try #require(ends[.low]) - unfinishedEndMs
        #expect(high < low, "high ended \(high) ms after the speech, low \(low) ms")
        #expect(high <= 2_100 && low >= 7_500, "high ended \(high) ms after the speech, low \(low) ms")
    }

    @Test(arguments: [nil, .auto] as [ServerVADSettings.Eagerness?])
    func withoutCreateResponseATurnIsCommittedButNotAnswered(eagerness: ServerVADSettings.Eagerness?) async throws {
        let (session, recorder) = try SemanticSession.make(eagerness: eagerness, createResponse: false)
        var input = SpokenInput(session)
        try await input.pause(milliseconds: 300)
        try await input.say(Self.question)
        try await input.pause(milliseconds: 1_000)
        #expect(await recorder.waitFor(Match.finalTranscript))
        #expect(await session.ledger.messages == [.user(Self.question)])
        #expect(await !session.hasActiveResponse)
        #expect(await recorder.count(Match.responseStarted) == 0)
    }

    /// The user talks over the agent's reply: with `interrupt_response` the reply is cancelled
    /// as soon as the speech is long enough, before the turn ends; without it the reply goes on
    /// until the new turn's response replaces it.
    @Test(arguments: [(nil, true), (nil, false), (.auto, true), (.auto, false)] as [(ServerVADSettings.Eagerness?, Bool)])
    func interruptResponseDecidesWhetherSpeechCancelsTheReply(eagerness: ServerVADSettings.Eagerness?, interrupts: Bool) async throws {
        let reply = ScriptedLanguageModel.Reply([.text("Sure. Tokyo is nine hours ahead of London, so it is evening there now, and the shops are closing. "), .hang])
        let model = ScriptedLanguageModel(replies: [reply] + Array(repeating: .text("Okay."), count: 4))
        let (session, recorder) = try SemanticSession.make(eagerness: eagerness, interruptResponse: interrupts, model: model)
        var input = SpokenInput(session)
        try await input.pause(milliseconds: 300)
        try await input.say(Self.question)
        try await input.pause(milliseconds: 1_000)
        #expect(await recorder.waitFor(Match.audio))

        try await input.say("Wait, stop, that is not what I asked.")
        if eagerness != nil { _ = try await input.pauseForVerdict(recorder, count: 2) }
        try await input.pause(milliseconds: 4_500)
        #expect(await recorder.waitFor(Match.responseStarted, count: 2))
        let events = await recorder.events
        let cancelled = try #require(events.firstIndex(where: Match.responseDone(.cancelled)))
        let secondTurnEnded = try #require(events.indices.filter { Match.isSpeechStopped(events[$0]) }.dropFirst().first)
        if interrupts {
            #expect(cancelled < secondTurnEnded, "the reply was cancelled only when the turn ended")
        } else {
            #expect(cancelled > secondTurnEnded, "the reply was cancelled while the user spoke")
        }
    }
}

/// Sessions on the real Silero VAD and Smart Turn model, with scripted words and replies.
enum SemanticSession {
    /// A session whose recognizer hears `heard` in every utterance.
    static func make(
        eagerness: ServerVADSettings.Eagerness?, createResponse: Bool = true, interruptResponse: Bool = true,
        heard: String = SemanticVADSessionTests.question,
        // Responses prepared during pauses take replies too.
        model: ScriptedLanguageModel = ScriptedLanguageModel(replies: Array(repeating: .text("It is evening there."), count: 4))
    ) throws -> (VoiceSession, SessionRecorder) {
        let vad = try SileroVAD(modelPath: TestModels.locator.path(of: .sileroVAD))
        let providers = VoiceSessionProviders(
            recognizer: FixedSpeechRecognizer(text: heard),
            model: model, synthesizer: ScriptedSpeechSynthesizer(),
            makeVoiceActivityDetector: { vad },
            makeResampler: VoiceSessionProviders.sincResampler,
            turnCompletionModel: try SmartTurnModel(modelPath: TestModels.locator.path(of: .smartTurn))
        )
        var configuration = VoiceSessionConfiguration()
        configuration.turnDetection = ServerVADSettings(createResponse: createResponse, interruptResponse: interruptResponse, eagerness: eagerness)
        let session = VoiceSession(providers: providers, configuration: configuration)
        let recorder = SessionRecorder()
        recorder.record(session)
        return (session, recorder)
    }
}

/// Feeds a session flite's speech and silence at 16 kHz, in 100 ms chunks as a client streams
/// them, and keeps the audio time.
struct SpokenInput {
    let session: VoiceSession
    /// Audio time sent so far.
    private(set) var ms = 0

    init(_ session: VoiceSession) { self.session = session }

    /// Says `text`; returns the audio time at which flite's clip ends.
    @discardableResult
    mutating func say(_ text: String) async throws -> Int {
        try await send(SampleConversion.pcm16(TestModels.speech(text)))
        return ms
    }

    /// The silence after which `semantic_vad` judges a pause, and a frame more.
    static let judgedPauseMs = 300

    /// Pauses for `judgedPauseMs`, then waits (for at most 30 s) for the `count`th verdict of
    /// the turn-completion model, as it would arrive while a person is still pausing.
    mutating func pauseForVerdict(_ recorder: SessionRecorder, count: Int = 1) async throws -> (probability: Float, endsTurn: Bool) {
        try await pause(milliseconds: Self.judgedPauseMs)
        #expect(await recorder.waitFor(Match.isVerdict, count: count))
        let verdicts = await recorder.events.compactMap(Match.verdict)
        return try #require(verdicts.dropFirst(count - 1).first)
    }

    /// Plays 16 kHz samples.
    mutating func play(_ samples: [Float]) async throws {
        try await send(SampleConversion.pcm16(samples))
    }

    mutating func pause(milliseconds: Int) async throws {
        try await send([Int16](repeating: 0, count: 16 * milliseconds))
    }

    private mutating func send(_ samples: [Int16]) async throws {
        for start in stride(from: 0, to: samples.count, by: 1_600) {
            try await session.appendAudio(Array(samples[start..<min(start + 1_600, samples.count)]), sampleRate: 16_000)
        }
        ms += samples.count / 16
    }
}

/// Event predicates of the scenarios.
enum Match {
    static func responseDone(_ status: ResponseStatus) -> @Sendable (VoiceSessionEvent) -> Bool {
        { if case .responseDone(_, status, _, _) = $0 { true } else { false } }
    }
    static let responseStarted: @Sendable (VoiceSessionEvent) -> Bool = { if case .responseStarted = $0 { true } else { false } }
    static let audio: @Sendable (VoiceSessionEvent) -> Bool = { if case .agentAudio = $0 { true } else { false } }
    static let finalTranscript: @Sendable (VoiceSessionEvent) -> Bool = { if case .userTranscriptFinal = $0 { true } else { false } }
    static let isVerdict: @Sendable (VoiceSessionEvent) -> Bool = { verdict($0) != nil }
    static let isSpeechStopped: @Sendable (VoiceSessionEvent) -> Bool = { speechStoppedMs($0) != nil }

    static func speechStoppedMs(_ event: VoiceSessionEvent) -> Int? {
        if case .speechStopped(_, let audioEndMs) = event { audioEndMs } else { nil }
    }

    static func verdict(_ event: VoiceSessionEvent) -> (probability: Float, endsTurn: Bool)? {
        if case .turnJudged(_, _, let probability, let endsTurn, _) = event { (probability, endsTurn) } else { nil }
    }
}
