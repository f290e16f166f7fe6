import Foundation
import ParleyCore

/// Zero-latency providers: whatever a turn costs beyond them is the pipeline's own overhead.
enum InstantProviders {
    /// The reply every turn gets: one sentence.
    static let reply = "Sure, I can do that."

    /// The providers, with energy VAD and libsoxr resampling as the server uses them.
    static func make() -> VoiceSessionProviders {
        VoiceSessionProviders(
            recognizer: InstantRecognizer(),
            model: InstantLanguageModel(),
            synthesizer: InstantSynthesizer(),
            makeVoiceActivityDetector: { EnergyVAD() },
            makeResampler: { from, to in BenchmarkServer.resampler(from: from, to: to) }
        )
    }
}

/// Hears the same words in every utterance, at once.
struct InstantRecognizer: SpeechRecognizer {
    let sampleRate = 16_000
    let supportsPartials = false

    func transcribe(_ samples: [Float], isFinal: Bool) async throws -> Transcription {
        Transcription(text: "Can you help me?", audioDuration: Double(samples.count) / Double(sampleRate), processingDuration: 0)
    }
}

/// Streams `InstantProviders.reply` word by word, at once.
struct InstantLanguageModel: LanguageModel {
    func stream(_ request: ChatRequest) -> AsyncThrowingStream<LanguageModelEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: LanguageModelEvent.self, bufferingPolicy: .unbounded)
        let words = InstantProviders.reply.split(separator: " ")
        for (index, word) in words.enumerated() {
            continuation.yield(.textDelta(index == 0 ? String(word) : " " + word))
        }
        continuation.yield(.finished(.stop, TokenUsage(promptTokens: 10, completionTokens: words.count)))
        continuation.finish()
        return stream
    }
}

/// Speaks any text as the same 200 ms of 24 kHz audio, at once.
struct InstantSynthesizer: SpeechSynthesizer {
    let sampleRate = 24_000
    private static let audio: [Int16] = (0..<4_800).map { Int16(4_000 * sin(2 * Double.pi * 220 * Double($0) / 24_000)) }

    func synthesize(_ text: String, options: SpeechOptions) -> AsyncThrowingStream<[Int16], any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: [Int16].self, bufferingPolicy: .unbounded)
        continuation.yield(Self.audio)
        continuation.finish()
        return stream
    }
}
