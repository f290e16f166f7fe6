import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyLocal

/// The agent's own voice leaking back into the microphone at −20 dB, as from a phone's speaker:
/// without echo cancellation the session hears itself talk over itself; with
/// `parley_echo_cancellation` it does not.
@Suite struct EchoCancellationTests {
    static let reply = "Tokyo is nine hours ahead of London. It is evening there now, and the shops are closing."

    /// Asks a question, waits for the whole spoken reply, then plays it back into the input
    /// 40 ms late at −20 dB, with `user` said over it from `userAtMs` of it; returns the
    /// session's events.
    func leakTheReplyBack(cancellingEcho: Bool, user: [Float] = [], userAtMs: Int = 0) async throws -> SessionRecorder {
        let vad = try SileroVAD(modelPath: TestModels.locator.path(of: .sileroVAD))
        let providers = VoiceSessionProviders(
            recognizer: try TestModels.recognizer(),
            model: ScriptedLanguageModel(replies: [.text(Self.reply), .text("Okay.")]), synthesizer: try FliteSpeechSynthesizer(),
            makeVoiceActivityDetector: { vad }, makeResampler: VoiceSessionProviders.sincResampler,
            makeEchoCanceller: { SpeexEchoCanceller(frameLength: $0, sampleRate: $1) }
        )
        var configuration = VoiceSessionConfiguration()
        configuration.cancelsEcho = cancellingEcho
        // What the agent says is only in the audio: responses start once the turn has ended.
        configuration.preemptiveGeneration = false
        // Nothing more is sent until the reply has been: it all plays from there on.
        var (_, recorder, input) = try await AnsweredSession.make(providers: providers, configuration: configuration, pauseMs: 600)
        let played = await recorder.events.flatMap { event -> [Int16] in
            if case .agentAudio(_, _, let samples) = event { samples } else { [] }
        }
        var toInput = VoiceSessionProviders.sincResampler(from: 24_000, to: 16_000)
        var leaked = toInput.process(SampleConversion.float(played)).map { $0 * 0.1 }
        for (index, sample) in user.enumerated() where userAtMs * 16 + index < leaked.count { leaked[userAtMs * 16 + index] += sample }
        try await input.pause(milliseconds: 40)
        try await input.play(leaked)
        try await input.pause(milliseconds: 1_500)
        return recorder
    }

    static let paused: @Sendable (VoiceSessionEvent) -> Bool = { if case .outputAudioPaused = $0 { true } else { false } }
    static let started: @Sendable (VoiceSessionEvent) -> Bool = { if case .speechStarted = $0 { true } else { false } }

    @Test func theSessionDoesNotHearItselfWhenItCancelsItsEcho() async throws {
        let plain = try await leakTheReplyBack(cancellingEcho: false)
        let cancelled = try await leakTheReplyBack(cancellingEcho: true)
        let heard = (await plain.count(Self.paused), await plain.count(Self.started))
        let heardCancelled = (await cancelled.count(Self.paused), await cancelled.count(Self.started))
        print("The agent's voice at -20 dB: without echo cancellation \(heard.0) pauses and \(heard.1) turns; with it \(heardCancelled.0) and \(heardCancelled.1)")
        // Without it, the session takes its own voice for the user's; with it, the only turn is
        // the question, and the agent is not even paused: while the canceller is still learning
        // the echo path, in the reply's first second, what it leaves is no louder than usual
        // (EchoResidueGate).
        #expect(heard.1 > 1)
        #expect(heardCancelled.1 == 1)
        #expect(heardCancelled.0 == 0)
        #expect(await cancelled.count { if case .interruptionDecided(_, _, true, _, _) = $0 { true } else { false } } == 0)
    }

    @Test func theUserOverTheCancelledEchoStillInterrupts() async throws {
        // "Wait, that is not what I asked." 1.5 s into the echo (the canceller still learning),
        // as loud as the agent's voice played: the agent stops.
        let user = try await TestModels.speech("Wait, that is not what I asked.")
        let recorder = try await leakTheReplyBack(cancellingEcho: true, user: user, userAtMs: 1_500)
        #expect(await recorder.waitFor({ if case .interruptionDecided(_, _, true, _, _) = $0 { true } else { false } }, seconds: 10))
        #expect(await recorder.count(Self.paused) == 1)
    }
}
