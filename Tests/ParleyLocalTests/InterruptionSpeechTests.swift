import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyLocal

/// Speech over a speaking agent with the real ears: the Silero VAD hears flite's voice and a
/// synthesised cough, Whisper transcribes what was said over the agent, and the session decides
/// from that alone whether it was meant. The agent's reply is scripted (six seconds of audio).
@Suite struct InterruptionSpeechTests {
    static let reply = Array(repeating: "Here is a long answer that goes on for a while.", count: 3).joined(separator: " ")

    /// Asks a question, lets the reply start playing, then plays `overlay` over it.
    func playOverTheAgent(_ overlay: [Float]) async throws -> (SessionRecorder, VoiceSession) {
        let vad = try SileroVAD(modelPath: TestModels.locator.path(of: .sileroVAD))
        let providers = VoiceSessionProviders(
            recognizer: try TestModels.recognizer(),
            model: ScriptedLanguageModel(replies: [.text(Self.reply), .text("Okay.")]), synthesizer: ScriptedSpeechSynthesizer(),
            makeVoiceActivityDetector: { vad },
            makeResampler: VoiceSessionProviders.sincResampler
        )
        var (session, recorder, input) = try await AnsweredSession.make(providers: providers, configuration: VoiceSessionConfiguration())
        try await input.pause(milliseconds: 500)
        try await input.play(overlay)
        try await input.pause(milliseconds: 800)
        return (recorder, session)
    }

    static let paused: @Sendable (VoiceSessionEvent) -> Bool = { if case .outputAudioPaused = $0 { true } else { false } }

    /// The verdict on the speech over the agent, once it came; `nil` when it never paused the agent.
    func verdict(_ recorder: SessionRecorder) async -> (interrupts: Bool, words: String?)? {
        // The recorder may lag the session: speech that paused the agent has a verdict within
        // seconds (sound that never paused it, none), and the pause is recorded before it.
        let decided = await recorder.waitFor({ if case .interruptionDecided = $0 { true } else { false } }, seconds: 10)
        guard await recorder.count(Self.paused) > 0 else { return nil }
        #expect(decided)
        let verdicts: [(interrupts: Bool, words: String?)] = await recorder.events.compactMap { event in
            if case .interruptionDecided(_, _, let interrupts, _, let words) = event { (interrupts, words) } else { nil }
        }
        return verdicts.first
    }

    static let resumed: @Sendable (VoiceSessionEvent) -> Bool = { if case .outputAudioResumed = $0 { true } else { false } }

    /// A clip named `"voice|text"`: `flite` (cmu_us_slt, in process) or a `TestVoice` by name.
    static func clip(_ spec: String) async throws -> [Float] {
        let parts = spec.split(separator: "|", maxSplits: 1).map(String.init)
        switch parts[0] {
        case "flite": return try await TestModels.speech(parts[1])
        case "espeak": return try await TestVoice.espeak("en-us").speak(parts[1])
        default: return try await TestVoice.flite(parts[0]).speak(parts[1])
        }
    }

    /// Backchannels in several voices: the agent pauses, hears only an acknowledgement and
    /// resumes. Among them those a plain decode of Whisper tiny.en mishears: rms's "Yeah."
    /// ("You have.") and slt's "Sure." ("Share."). (flite slt's "Mm-hmm." lasts 1.13 s, past
    /// `max_backchannel_ms`: its words are checked then, and it is let go as a backchannel.)
    @Test(arguments: [
        "flite|Yeah.", "flite|Okay.", "flite|Right.", "flite|I see.", "rms|I see.", "awb|Got it.", "espeak|Yeah.", "kal16|Okay.",
        "rms|Yeah.", "flite|Sure.",
    ])
    func aBackchannelLetsTheAgentGoOn(backchannel: String) async throws {
        let (recorder, session) = try await playOverTheAgent(try await Self.clip(backchannel))
        let heard = await verdict(recorder)
        #expect(heard.map { !$0.interrupts } ?? true, "\(backchannel) was heard as \(String(describing: heard?.words)) and interrupted")
        let pauses = await recorder.count(Self.paused)
        #expect(await recorder.waitFor(Self.resumed, count: pauses), "\(backchannel) paused the agent \(pauses) times; it did not resume as often")
        #expect(await recorder.count { if case .responseDone(_, .cancelled, _, _) = $0 { true } else { false } } == 0)
        #expect(await session.ledger.messages.count == 2)
    }

    static let noises: [String: [Float]] = [
        "cough 1": SyntheticSounds.cough(seed: 1), "cough 2": SyntheticSounds.cough(seed: 2), "cough 3": SyntheticSounds.cough(seed: 3),
        "rustle": SyntheticSounds.rustle(), "typing": SyntheticSounds.clicks(), "knocks": SyntheticSounds.knock(),
    ]

    /// Coughs and short noises (Whisper alone hears "I'm not." in these coughs): the agent
    /// goes on, not even paused, and no turn is made of them.
    @Test(arguments: ["cough 1", "cough 2", "cough 3", "rustle", "typing", "knocks"])
    func aNoiseLetsTheAgentGoOn(noise: String) async throws {
        let (recorder, session) = try await playOverTheAgent(try #require(Self.noises[noise]))
        let heard = await verdict(recorder)
        #expect(heard == nil, "the \(noise) paused the agent and was heard as \(String(describing: heard?.words))")
        #expect(await recorder.count { if case .responseDone(_, .cancelled, _, _) = $0 { true } else { false } } == 0)
        #expect(await recorder.count { if case .speechStarted = $0 { true } else { false } } == 1)
        #expect(await session.ledger.messages.count == 2)
    }

    /// Meant interruptions in several voices cancel the reply; the stored reply keeps only what
    /// was heard, and what was said is the next turn. Among them words a plain decode mishears
    /// (kal16's "Wait." as "way", rms's "Stop." as "start") and speech with pauses in it, judged
    /// by its words as a whole.
    @Test(arguments: [
        "flite|Wait.", "flite|Stop.", "flite|No, I meant Paris.", "flite|Hold on, what about Osaka?", "rms|Hold on.", "espeak|Stop.",
        "awb|Wait, that is not what I asked.", "kal16|Wait.", "rms|Stop.", "espeak|No, stop, that is wrong.",
    ])
    func aMeantInterruptionStopsTheAgentAndIsTheNextTurn(interruption: String) async throws {
        let (recorder, session) = try await playOverTheAgent(try await Self.clip(interruption))
        let heard = await verdict(recorder)
        #expect(heard?.interrupts == true, "\(interruption) was heard as \(String(describing: heard?.words))")
        #expect(await recorder.waitFor(Match.responseDone(.completed), count: 2))
        let messages = await session.ledger.messages
        #expect(messages.count == 4)
        if case .assistant(let text, _, let interrupted)? = messages.dropFirst().first {
            #expect(interrupted && text.count < Self.reply.count)
        }
    }
}

/// A session with real ears that has been asked a question (after 300 ms of silence, followed
/// by `pauseMs` of silence) and has sent its whole reply; nothing more has been sent since, so
/// the reply plays from the input's current time.
enum AnsweredSession {
    static let question = "What time is it in Tokyo right now?"

    static func make(
        providers: VoiceSessionProviders, configuration: VoiceSessionConfiguration, pauseMs: Int = 1_000
    ) async throws -> (VoiceSession, SessionRecorder, SpokenInput) {
        let session = VoiceSession(providers: providers, configuration: configuration)
        let recorder = SessionRecorder()
        recorder.record(session)
        var input = SpokenInput(session)
        try await input.pause(milliseconds: 300)
        try await input.say(question)
        try await input.pause(milliseconds: pauseMs)
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        return (session, recorder, input)
    }
}
