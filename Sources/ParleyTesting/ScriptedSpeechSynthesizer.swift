import Foundation
import ParleyCore

/// A speech synthesizer for tests: every text becomes a fixed amount of audio per word,
/// produced at once or held back by a gate, and failures can be scripted.
public final class ScriptedSpeechSynthesizer: SpeechSynthesizer, @unchecked Sendable {
    // @unchecked Sendable: `spokenTexts`, `spokenOptions` and `failures` are guarded by `lock`.
    private let lock = NSLock()
    private var spokenTexts: [String] = []
    private var spokenOptions: [SpeechOptions] = []
    private var failures: [ProviderError]
    private let gate: AsyncGate?

    public let sampleRate: Int
    /// Milliseconds of audio produced per word.
    public let millisecondsPerWord: Int

    /// Creates a synthesizer.
    /// - Parameters:
    ///   - failures: errors thrown by the first calls, in order.
    ///   - gate: when given, audio for each text is yielded only once the gate opens.
    public init(sampleRate: Int = 24_000, millisecondsPerWord: Int = 200, failures: [ProviderError] = [], gate: AsyncGate? = nil) {
        self.sampleRate = sampleRate
        self.millisecondsPerWord = millisecondsPerWord
        self.failures = failures
        self.gate = gate
    }

    /// The texts asked for so far, in order.
    public var texts: [String] { lock.withLock { spokenTexts } }
    /// The options each text was asked for with, in order.
    public var options: [SpeechOptions] { lock.withLock { spokenOptions } }

    public func synthesize(_ text: String, options: SpeechOptions) -> AsyncThrowingStream<[Int16], any Error> {
        let failure: ProviderError? = lock.withLock {
            spokenTexts.append(text)
            spokenOptions.append(options)
            return failures.isEmpty ? nil : failures.removeFirst()
        }
        let words = max(1, text.split(separator: " ").count)
        let sampleCount = words * millisecondsPerWord * sampleRate / 1000
        let gate = self.gate
        return AsyncThrowingStream(bufferingPolicy: .unbounded) { continuation in
            let task = Task {
                if let failure { continuation.finish(throwing: failure); return }
                if let gate { await gate.wait() }
                // A quiet 440 Hz tone, so the audio is not silence.
                let samples = (0..<sampleCount).map { Int16(3000 * sin(2 * Double.pi * 440 * Double($0) / 24_000)) }
                let chunk = max(1, sampleRate / 10)
                var start = 0
                while start < samples.count, !Task.isCancelled {
                    continuation.yield(Array(samples[start..<min(start + chunk, samples.count)]))
                    start += chunk
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
