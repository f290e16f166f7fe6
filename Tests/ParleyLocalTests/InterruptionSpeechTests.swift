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
        guard await recorder.count(Self.paused) > 0 else { return nil }
        #expect(await recorder.waitFor { if case .interruptionDecided = $0 { true } else { false } })
        let verdicts: [(interrupts: Bool, words: String?)] = await recorder.events.compactMap { event in
            if case .interruptionDecided(_, _, let interrupts, _, let words) = event { (interrupts, words) } else { nil }
        }
        return verdicts.first
    }

    /// Backchannels flite says recognisably (its "mm-hmm" and "uh-huh" come out as spelled
    /// letters and other words, over a second long).
    @Test(arguments: ["Yeah.", "Okay.", "Right.", "I see."])
    func aBackchannelLetsTheAgentGoOn(backchannel: String) async throws {
        let (recorder, session) = try await playOverTheAgent(try await TestModels.speech(backchannel))
        let heard = await verdict(recorder)
        #expect(heard.map { !$0.interrupts } ?? true, "\(backchannel) was heard as \(String(describing: heard?.words)) and interrupted")
        #expect(await recorder.count { if case .responseDone(_, .cancelled, _, _) = $0 { true } else { false } } == 0)
        #expect(await session.ledger.messages.count == 2)
    }

    @Test func aCoughLetsTheAgentGoOn() async throws {
        let (recorder, session) = try await playOverTheAgent(SyntheticSounds.cough())
        let heard = await verdict(recorder)
        #expect(heard.map { !$0.interrupts } ?? true, "the cough was heard as \(String(describing: heard?.words))")
        #expect(await session.ledger.messages.count == 2)
    }

    @Test(arguments: ["Wait.", "Stop.", "No, I meant Paris.", "Hold on, what about Osaka?"])
    func aMeantInterruptionStopsTheAgentAndIsTheNextTurn(interruption: String) async throws {
        let (recorder, session) = try await playOverTheAgent(try await TestModels.speech(interruption))
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
