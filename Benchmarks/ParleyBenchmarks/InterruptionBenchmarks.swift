import Foundation
import ParleyCore
import ParleyLocal
import ParleyTesting

/// Speech over a speaking agent, each clip in a session of its own on the real ears (Silero
/// VAD, Whisper tiny.en for the words), the agent's reply scripted: backchannels and coughs
/// that must not interrupt, meant interruptions that must, and how soon the agent is paused.
/// Clips are flite's voice (16 kHz) and synthesised coughs, played 500 ms into a 6 s reply.
func interruptionBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    let backchannels = ["Yeah.", "Okay.", "Right.", "I see.", "Sure.", "Got it."]
    let interruptions = ["Wait.", "Stop.", "No, I meant Paris.", "Hold on, what about Osaka?", "Actually, make it tomorrow.", "No, stop, that is wrong."]
    let vad = try SileroVAD(modelPath: ModelLocator().path(of: .sileroVAD))
    let recognizer = try WhisperSpeechRecognizer(modelPath: ModelLocator().path(of: .whisperTinyEnglish))
    let question = try await fliteSpeech("What time is it in Tokyo right now?")

    var falseInterruptions = 0
    var notMeant = 0
    var harmless: [[Float]] = (1...3).map { SyntheticSounds.cough(seed: UInt64($0)) }
    for text in backchannels { harmless.append(try await fliteSpeech(text)) }
    for clip in harmless {
        let outcome = try await playOverAgent(clip, question: question, vad: vad, recognizer: recognizer)
        notMeant += 1
        if outcome.interrupted { falseInterruptions += 1 }
    }
    var caught = 0
    var pauseDelays: [Double] = []
    var verdictWaits: [Double] = []
    for text in interruptions {
        let clip = try await fliteSpeech(text)
        let outcome = try await playOverAgent(clip, question: question, vad: vad, recognizer: recognizer)
        if outcome.interrupted { caught += 1 }
        if let delay = outcome.onsetToPauseMs { pauseDelays.append(Double(delay)) }
        if let wait = outcome.verdictWaitMs { verdictWaits.append(wait) }
    }
    let falseRate = Double(falseInterruptions) / Double(notMeant) * 100
    let caughtRate = Double(caught) / Double(interruptions.count) * 100
    let pauseP50 = percentile(pauseDelays, 50)
    return [
        BenchmarkResult(area: "turns", name: "false interruptions: flite backchannels and synthesised coughs over the agent (\(notMeant) clips)",
                        value: falseRate, unit: "%", target: "<= 5 %", meetsTarget: falseRate <= 5),
        BenchmarkResult(area: "turns", name: "real interruptions caught: flite's 'wait', 'stop', 'no, I meant…' over the agent (\(interruptions.count) clips)",
                        value: caughtRate, unit: "%", target: ">= 95 %", meetsTarget: caughtRate >= 95),
        BenchmarkResult(area: "turns", name: "real interruption: speech onset → agent paused (parley.output_audio.paused), audio time, p50",
                        value: pauseP50, unit: "ms", target: "<= 300 ms", meetsTarget: pauseP50 <= 300),
        BenchmarkResult(area: "turns", name: "short interruption: end of sending → verdict (Whisper tiny.en on the clip), p50",
                        value: percentile(verdictWaits, 50), unit: "ms", target: "", meetsTarget: nil),
    ]
}

/// What happened to one clip played over the agent.
private struct InterruptionOutcome {
    var interrupted: Bool
    /// Audio time from the clip's first sound to the pause, when it paused the agent.
    var onsetToPauseMs: Int?
    /// Wall time from the last audio sent to the verdict, when the words were judged.
    var verdictWaitMs: Double?
}

/// Asks `question`, waits for the scripted reply, then plays `clip` 500 ms into its six seconds.
private func playOverAgent(
    _ clip: [Float], question: [Float], vad: SileroVAD, recognizer: WhisperSpeechRecognizer
) async throws -> InterruptionOutcome {
    let reply = Array(repeating: "Here is a long answer that goes on for a while.", count: 3).joined(separator: " ")
    let providers = VoiceSessionProviders(
        recognizer: recognizer, model: ScriptedLanguageModel(replies: [.text(reply), .text("Okay.")]),
        synthesizer: ScriptedSpeechSynthesizer(), makeVoiceActivityDetector: { vad },
        makeResampler: VoiceSessionProviders.sincResampler
    )
    let session = VoiceSession(providers: providers, configuration: VoiceSessionConfiguration())
    let recorder = SessionRecorder()
    recorder.record(session)
    let silence = { (ms: Int) in [Float](repeating: 0, count: 16 * ms) }
    let asked = silence(300) + question + silence(1_000)
    try await send(asked, to: session)
    _ = await recorder.waitFor { if case .responseDone = $0 { true } else { false } }
    let clipStartMs = asked.count / 16 + 500
    let onsetMs = clipStartMs + (clip.firstIndex { abs($0) > 0.01 } ?? 0) / 16
    try await send(silence(500) + clip + silence(800), to: session)
    let sent = ContinuousClock.now
    let paused = await recorder.events.compactMap { event -> Int? in if case .outputAudioPaused(let ms) = event { ms } else { nil } }.first
    guard paused != nil else { return InterruptionOutcome(interrupted: false) }
    _ = await recorder.waitFor { if case .interruptionDecided = $0 { true } else { false } }
    let waited = (ContinuousClock.now - sent).timeInterval * 1000
    let decision = await recorder.events.compactMap { event -> (Bool, String?)? in
        if case .interruptionDecided(_, _, let interrupts, _, let words) = event { (interrupts, words) } else { nil }
    }.first
    return InterruptionOutcome(
        interrupted: decision?.0 ?? false, onsetToPauseMs: paused.map { $0 - onsetMs },
        verdictWaitMs: decision?.1 == nil ? nil : waited
    )
}

private func send(_ samples: [Float], to session: VoiceSession) async throws {
    let pcm = SampleConversion.pcm16(samples)
    for start in stride(from: 0, to: pcm.count, by: 1_600) {
        try await session.appendAudio(Array(pcm[start..<min(start + 1_600, pcm.count)]), sampleRate: 16_000)
    }
}

private func fliteSpeech(_ text: String) async throws -> [Float] {
    var samples: [Float] = []
    for try await chunk in try FliteSpeechSynthesizer().synthesize(text, options: SpeechOptions()) {
        samples += chunk.map { Float($0) / 32_768 }
    }
    return samples
}
