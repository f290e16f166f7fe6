import BenchmarkHarness
import Foundation
import ParleyCore
import ParleyLocal
import ParleyTesting

/// Speech over a speaking agent, each clip in a session of its own on the real ears (Silero
/// VAD, Whisper tiny.en for the words), the agent's reply scripted: backchannels, coughs and
/// short noises that must not interrupt, meant interruptions that must, and how soon the agent
/// is paused. Speech comes from six voices (flite slt, rms, awb, kal16; eSpeak NG en-us and
/// en-gb+f3), noises are synthesised; each clip is played 500 ms into a 6 s reply. Every clip
/// decided wrongly is logged on standard error with what the policy heard.
func interruptionBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    let backchannels = ["Yeah.", "Okay.", "Right.", "I see.", "Sure.", "Got it.", "Uh-huh.", "Yep.", "Alright."]
    let interruptions = [
        "Wait.", "Stop.", "No, I meant Paris.", "Hold on.", "Hold on, what about Osaka?", "Actually, make it tomorrow.",
        "No, stop, that is wrong.", "Wait, that is not what I asked.", "Sorry, can you say that again?", "Stop, I have another question.",
    ]
    let vad = try SileroVAD(modelPath: ModelLocator().path(of: .sileroVAD))
    let recognizer = try WhisperSpeechRecognizer(modelPath: ModelLocator().path(of: .whisperTinyEnglish))
    let question = try await TestVoice.flite("slt").speak("What time is it in Tokyo right now?")
    let voices = quick ? Array(TestVoice.assorted.prefix(2)) : TestVoice.assorted

    var harmless: [(name: String, clip: [Float])] = (1...3).map { ("cough \($0)", SyntheticSounds.cough(seed: UInt64($0))) }
    harmless += [("knocks", SyntheticSounds.knock()), ("rustle", SyntheticSounds.rustle()), ("typing", SyntheticSounds.clicks())]
    var meant: [(name: String, clip: [Float])] = []
    for (index, voice) in voices.enumerated() {
        for offset in 0..<3 {
            let text = backchannels[(index * 3 + offset) % backchannels.count]
            harmless.append(("\(voice) '\(text)'", try await voice.speak(text)))
        }
        for offset in 0..<4 {
            let text = interruptions[(index * 4 + offset) % interruptions.count]
            meant.append(("\(voice) '\(text)'", try await voice.speak(text)))
        }
    }

    var falseInterruptions = 0
    for (name, clip) in harmless {
        let outcome = try await playOverAgent(clip, question: question, vad: vad, recognizer: recognizer)
        if outcome.interrupted { falseInterruptions += 1 }
        // What the policy's inputs were: how much of the clip is voiced, what Whisper makes of it.
        let voicedMs = stride(from: 0, to: clip.count - 511, by: 512).filter { Voicing.isVoiced(Array(clip[$0..<$0 + 512]), sampleRate: 16_000) }.count * 32
        let heard = try await recognizer.transcribe([Float](repeating: 0, count: 1_600) + clip + [Float](repeating: 0, count: 1_600), isFinal: true).text
        log("\(outcome.interrupted ? "FALSE INTERRUPTION" : "let go"): \(name): \(voicedMs) ms voiced, Whisper alone hears '\(heard)'; \(outcome.explanation)")
    }
    var caught = 0
    var pauseDelays: [Double] = []
    var verdictWaits: [Double] = []
    for (name, clip) in meant {
        let outcome = try await playOverAgent(clip, question: question, vad: vad, recognizer: recognizer)
        if outcome.interrupted { caught += 1 } else { log("missed interruption: \(name): \(outcome.explanation)") }
        if let delay = outcome.onsetToPauseMs { pauseDelays.append(Double(delay)) }
        if let wait = outcome.verdictWaitMs { verdictWaits.append(wait) }
    }
    let falseRate = Double(falseInterruptions) / Double(harmless.count) * 100
    let caughtRate = Double(caught) / Double(meant.count) * 100
    let pauseP50 = percentile(pauseDelays, 50)
    let speakers = "\(voices.count) voices"
    // The voicing check, on every frame of the meant clips (it runs only on speech frames while
    // the agent works; this is its cost were every frame such a frame).
    let frames = meant.flatMap { clip in stride(from: 0, to: clip.clip.count - 511, by: 512).map { Array(clip.clip[$0..<$0 + 512]) } }
    let voicingSeconds = medianSecondsPerCall(repetitions: quick ? 3 : 5) { for frame in frames { _ = Voicing.isVoiced(frame, sampleRate: 16_000) } }
    return [
        BenchmarkResult(area: "turns", name: "false interruptions: backchannels (\(speakers)), coughs, knocks, rustle, typing over the agent (\(harmless.count) clips)",
                        value: falseRate, unit: "%", target: "<= 5 %", meetsTarget: falseRate <= 5),
        BenchmarkResult(area: "turns", name: "real interruptions caught: 'wait', 'stop', 'no, I meant…', 'hold on', longer speech (\(speakers), \(meant.count) clips)",
                        value: caughtRate, unit: "%", target: ">= 95 %", meetsTarget: caughtRate >= 95),
        BenchmarkResult(area: "turns", name: "real interruption: speech onset → agent paused (parley.output_audio.paused), audio time, p50",
                        value: pauseP50, unit: "ms", target: "<= 300 ms", meetsTarget: pauseP50 <= 300),
        BenchmarkResult(area: "turns", name: "short interruption: end of sending → verdict (Whisper tiny.en on the clip), p50",
                        value: percentile(verdictWaits, 50), unit: "ms", target: "", meetsTarget: nil),
        BenchmarkResult(area: "turns", name: "voicing check (Voicing) CPU per session-second, every 512-sample frame at 16 kHz",
                        value: voicingSeconds / (Double(frames.count) * 0.032) * 1000, unit: "ms", target: "", meetsTarget: nil),
    ] + (try await noiseReductionBenchmarks(quick: quick))
}

private func log(_ line: String) {
    FileHandle.standardError.write(Data("turns: \(line)\n".utf8))
}

/// What happened to one clip played over the agent.
private struct InterruptionOutcome {
    var interrupted: Bool
    /// The policy's verdict as the session reported it (reason and words), or why there was none.
    var explanation: String
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
    // The recorder takes events from a stream, so it may lag the session: a clip that paused the
    // agent has a verdict within seconds; one that did not, none.
    _ = await recorder.waitFor({ if case .interruptionDecided = $0 { true } else { false } }, seconds: 10)
    let waited = (ContinuousClock.now - sent).timeInterval * 1000
    let paused = await recorder.events.compactMap { event -> Int? in if case .outputAudioPaused(let ms) = event { ms } else { nil } }.first
    guard paused != nil else { return InterruptionOutcome(interrupted: false, explanation: "never paused the agent") }
    let decision = await recorder.events.compactMap { event -> (Bool, InterruptionPolicy.Reason, String?)? in
        if case .interruptionDecided(_, _, let interrupts, let reason, let words) = event { (interrupts, reason, words) } else { nil }
    }.first
    return InterruptionOutcome(
        interrupted: decision?.0 ?? false,
        explanation: decision.map { "reason \($0.1.rawValue), words \($0.2.map { "'\($0)'" } ?? "not asked")" } ?? "no verdict",
        onsetToPauseMs: paused.map { $0 - onsetMs },
        verdictWaitMs: decision?.2 == nil ? nil : waited
    )
}

private func send(_ samples: [Float], to session: VoiceSession) async throws {
    let pcm = SampleConversion.pcm16(samples)
    for start in stride(from: 0, to: pcm.count, by: 1_600) {
        try await session.appendAudio(Array(pcm[start..<min(start + 1_600, pcm.count)]), sampleRate: 16_000)
    }
}
