import Foundation
import ParleyCore

/// Text-to-speech in process with a Piper neural voice (VITS, run by onnxruntime; by default
/// `en_US-joe-medium`, 22.05 kHz), clause by clause: the first clause of a reply plays while
/// the next is being made.
///
/// Phonemes come from the `espeak-ng` program, a long-lived child process (espeak-ng is
/// GPL-3.0 and is never linked). Syntheses run on the voice's own worker threads with one
/// onnxruntime thread each; the voice is loaded once per process and shared by every session.
///
/// ```swift
/// let tts = try PiperSpeechSynthesizer(modelPath: locator.path(of: .piperJoe), onnxRuntimePath: locator.onnxRuntimeLibraryPath())
/// for try await chunk in tts.synthesize("Hello there. How can I help?", options: SpeechOptions()) {
///     play(chunk)  // PCM16 at 22.05 kHz
/// }
/// ```
public struct PiperSpeechSynthesizer: SpeechSynthesizer {
    /// The voices this synthesizer has (one: en_US-joe-medium); any other `SpeechOptions.voice`
    /// (for example an OpenAI voice name sent by a client) speaks with it too.
    public static let voices = ["joe"]
    /// The slowest and fastest speaking rates accepted; others are clamped.
    public static let speedRange = 0.25...4.0
    /// How many syntheses run at once by default: half the cores, at least one.
    public static let defaultWorkerCount = max(1, ProcessInfo.processInfo.activeProcessorCount / 2)

    /// The voice's rate (22,050 Hz for en_US-joe-medium).
    public var sampleRate: Int { engine.config.sampleRate }
    /// The language of the voice's espeak-ng voice (`en` for `en-us`).
    public var languages: Set<String>? { [String(engine.config.espeakVoice.prefix { $0 != "-" })] }

    private let engine: PiperEngine

    /// Loads the voice (once per process) and checks that espeak-ng answers.
    /// - Parameters:
    ///   - modelPath: the voice's `.onnx` file; its config is `modelPath + ".json"`.
    ///   - onnxRuntimePath: onnxruntime's shared library.
    ///   - espeak: the `espeak-ng` program, a path or a name looked up in `PATH`.
    ///   - workerCount: the most syntheses running at once.
    /// - Throws: `LocalModelError` when a file is missing or cannot be loaded, `ProviderError`
    ///   when espeak-ng or onnxruntime fails.
    public init(modelPath: String, onnxRuntimePath: String, espeak: String = "espeak-ng", workerCount: Int = defaultWorkerCount) throws {
        engine = try PiperEngine.load(
            modelPath: modelPath, configPath: modelPath + ".json", onnxRuntimePath: onnxRuntimePath, espeak: espeak, workerCount: workerCount
        )
    }

    /// Synthesises `text`, yielding one chunk of PCM16 at `sampleRate` per clause as soon as
    /// it is made. `options.speed` scales the pace (clamped to `speedRange`); text without
    /// letters or digits yields nothing. Cancelling the consuming task stops the network.
    public func synthesize(_ text: String, options: SpeechOptions) -> AsyncThrowingStream<[Int16], any Error> {
        let clauses = PiperText.clauses(of: text)
        let speed = options.speed.isFinite ? min(max(options.speed, Self.speedRange.lowerBound), Self.speedRange.upperBound) : 1
        let lengthScale = engine.config.lengthScale / Float(speed)
        let engine = engine
        return AsyncThrowingStream(bufferingPolicy: .unbounded) { continuation in
            let producer = Task {
                do {
                    for clause in clauses {
                        try Task.checkCancellation()
                        let audio = try await engine.synthesize(clause, lengthScale: lengthScale)
                        if !audio.isEmpty { continuation.yield(audio) }
                    }
                    try Task.checkCancellation()
                    continuation.finish()
                } catch is CancellationError {
                    continuation.finish(throwing: ProviderError(.cancelled, provider: "piper", message: "synthesis was cancelled"))
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in producer.cancel() }
        }
    }
}
