import Foundation
import ParleyCore
import ParleyTesting
import Testing

/// A VAD for scenario tests: a frame is speech when it is loud.
struct LoudnessVAD: VoiceActivityDetector {
    let sampleRate = 16_000
    let frameLength = 320
    mutating func speechProbability(of frame: [Float]) -> Float {
        let energy = frame.reduce(Float(0)) { $0 + $1 * $1 } / Float(max(frame.count, 1))
        return energy > 0.001 ? 1 : 0
    }
    mutating func reset() {}
}

/// A resampler for tests that only handles equal rates (the scenarios run at 16 kHz in and 24 kHz out).
struct PassThroughResampler: Resampler {
    let inputSampleRate = 16_000
    let outputSampleRate = 16_000
    mutating func process(_ input: [Float]) -> [Float] { input }
    mutating func flush() -> [Float] { [] }
}

/// Audio at 16 kHz for scenarios: silence and "speech" (loud noise).
enum ScenarioAudio {
    static func silence(milliseconds: Int) -> [Int16] { [Int16](repeating: 0, count: 16 * milliseconds) }
    /// A loud voiced sound: a 140 Hz buzz (the first harmonics of a vowel) with some breath
    /// noise, so it is voiced as speech is (`Voicing`) and loud enough for `LoudnessVAD`.
    static func speech(milliseconds: Int) -> [Int16] {
        var generator = SeededGenerator(seed: 7)
        return (0..<(16 * milliseconds)).map { index in
            let t = Double(index) / 16_000
            let buzz = (1...5).reduce(0.0) { $0 + sin(2 * .pi * 140 * Double($1) * t) / Double($1) }
            return Int16(3_500 * buzz) + Int16.random(in: -800...800, using: &generator)
        }
    }

    /// Sends a question to `session`: 300 ms of silence, 800 ms of speech, then `pauseMs` of
    /// silence (less than the 300 ms window, so the turn has not ended yet).
    static func ask(_ session: VoiceSession, pauseMs: Int = 200) async throws {
        try await session.appendAudio(silence(milliseconds: 300), sampleRate: 16_000)
        try await session.appendAudio(speech(milliseconds: 800), sampleRate: 16_000)
        try await session.appendAudio(silence(milliseconds: pauseMs), sampleRate: 16_000)
    }
}

/// Event predicates used by the scenarios.
enum Match {
    static func responseDone(_ status: ResponseStatus) -> @Sendable (VoiceSessionEvent) -> Bool {
        { if case .responseDone(_, status, _, _) = $0 { true } else { false } }
    }
    static let responseStarted: @Sendable (VoiceSessionEvent) -> Bool = { if case .responseStarted = $0 { true } else { false } }
    static let audio: @Sendable (VoiceSessionEvent) -> Bool = { if case .agentAudio = $0 { true } else { false } }
    static let textDelta: @Sendable (VoiceSessionEvent) -> Bool = { if case .agentTextDelta = $0 { true } else { false } }
    static let error: @Sendable (VoiceSessionEvent) -> Bool = { if case .error = $0 { true } else { false } }
    static let finalTranscript: @Sendable (VoiceSessionEvent) -> Bool = { if case .userTranscriptFinal = $0 { true } else { false } }
    static let toolStarted: @Sendable (VoiceSessionEvent) -> Bool = { if case .toolCallStarted = $0 { true } else { false } }
    static let truncated: @Sendable (VoiceSessionEvent) -> Bool = { if case .itemTruncated = $0 { true } else { false } }
}

/// Whether `condition` holds within `seconds`, checked whenever the test task gets to run.
func eventually(seconds: Double = 30, _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + TestDeadline.seconds(seconds)
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        await Task.yield()
    }
    return false
}

/// Builds sessions with scripted providers.
func makeSession(
    recognizer: ScriptedSpeechRecognizer = ScriptedSpeechRecognizer(texts: ["What time is it?"]),
    model: ScriptedLanguageModel,
    synthesizer: ScriptedSpeechSynthesizer = ScriptedSpeechSynthesizer(),
    tools: ToolRegistry = ToolRegistry(),
    configuration: VoiceSessionConfiguration = VoiceSessionConfiguration()
) -> (VoiceSession, SessionRecorder) {
    let providers = VoiceSessionProviders(
        recognizer: recognizer, model: model, synthesizer: synthesizer, tools: tools,
        makeVoiceActivityDetector: { LoudnessVAD() },
        makeResampler: { _, _ in PassThroughResampler() }
    )
    let session = VoiceSession(providers: providers, configuration: configuration)
    let recorder = SessionRecorder()
    recorder.record(session)
    return (session, recorder)
}

/// An audio turn-completion model that calls every pause complete.
struct FixedCompletionAudio: TurnCompletionModel {
    let sampleRate = 16_000
    var probability: Float = 0.95
    func completionProbability(of samples: [Float]) -> Float { probability }
}

/// A `semantic_vad` (eagerness auto) session whose audio model gives every pause
/// `probability`, hearing with `recognizer` and reading pauses with `judge`.
func makeSemanticSession(
    recognizer: ScriptedSpeechRecognizer, probability: Float = 0.95, judge: (any TurnCompletionJudge)? = nil
) -> (VoiceSession, SessionRecorder) {
    let providers = VoiceSessionProviders(
        recognizer: recognizer,
        model: ScriptedLanguageModel(replies: Array(repeating: .text("Done."), count: 3)),
        synthesizer: ScriptedSpeechSynthesizer(), tools: ToolRegistry(),
        makeVoiceActivityDetector: { LoudnessVAD() }, makeResampler: { _, _ in PassThroughResampler() },
        turnCompletionModel: FixedCompletionAudio(probability: probability), turnCompletionJudge: judge
    )
    var configuration = VoiceSessionConfiguration()
    configuration.turnDetection = ServerVADSettings(eagerness: .auto)
    let session = VoiceSession(providers: providers, configuration: configuration)
    let recorder = SessionRecorder()
    recorder.record(session)
    return (session, recorder)
}

/// Sends 300 ms of quiet, 800 ms of speech (ending at 1,100 ms) and 400 ms of quiet, and waits
/// until the pause is judged (`verdict` picks which `turnJudged` counts).
func speakUntilThePauseIsJudged(
    _ session: VoiceSession, _ recorder: SessionRecorder,
    verdict: @escaping @Sendable (VoiceSessionEvent) -> Bool = { if case .turnJudged = $0 { true } else { false } }
) async throws {
    try await session.appendAudio(ScenarioAudio.silence(milliseconds: 300), sampleRate: 16_000)
    try await session.appendAudio(ScenarioAudio.speech(milliseconds: 800), sampleRate: 16_000)
    try await session.appendAudio(ScenarioAudio.silence(milliseconds: 400), sampleRate: 16_000)
    #expect(await recorder.waitFor(verdict))
}

/// A `semantic_vad` (eagerness auto) session whose audio model calls every pause complete,
/// hearing `transcripts` and reading pauses with `judge`, asked one thought with a pause in
/// it: 800 ms of speech, 400 ms of quiet (until the pause is judged), 600 ms more, quiet
/// again. Returns once the response is done.
func speakAThoughtWithAPause(
    transcripts: [String], judge: (any TurnCompletionJudge)? = nil
) async throws -> (VoiceSession, SessionRecorder) {
    let (session, recorder) = makeSemanticSession(recognizer: ScriptedSpeechRecognizer(texts: transcripts), judge: judge)
    try await speakUntilThePauseIsJudged(session, recorder)
    try await session.appendAudio(ScenarioAudio.speech(milliseconds: 600), sampleRate: 16_000)
    try await session.appendAudio(ScenarioAudio.silence(milliseconds: 400), sampleRate: 16_000)
    #expect(await recorder.waitFor(Match.responseDone(.completed)))
    return (session, recorder)
}
