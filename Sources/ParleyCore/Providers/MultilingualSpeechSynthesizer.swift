import Foundation

/// Speaks each language with the first of its synthesizers that speaks it: the agent's voice
/// follows the caller's language (`SpeechOptions.language`).
///
/// The first synthesizer is the default — it speaks text in no stated language, or in one
/// none of them speaks — and sets the sample rate; the others' audio is resampled to it.
///
/// ```swift
/// let voice = MultilingualSpeechSynthesizer([piper, espeak], makeResampler: VoiceSessionProviders.sincResampler)
/// voice.synthesize("Guten Tag!", options: SpeechOptions(language: "de"))  // espeak-ng's German voice
/// ```
public struct MultilingualSpeechSynthesizer: SpeechSynthesizer {
    /// The synthesizers, the default first.
    public let synthesizers: [any SpeechSynthesizer]
    private let makeResampler: @Sendable (_ fromRate: Int, _ toRate: Int) -> any Resampler

    /// Creates a synthesizer from `synthesizers` (at least one), the default first.
    public init(_ synthesizers: [any SpeechSynthesizer], makeResampler: @escaping @Sendable (_ fromRate: Int, _ toRate: Int) -> any Resampler) {
        precondition(!synthesizers.isEmpty, "MultilingualSpeechSynthesizer needs a synthesizer")
        self.synthesizers = synthesizers
        self.makeResampler = makeResampler
    }

    /// The default synthesizer's rate.
    public var sampleRate: Int { synthesizers[0].sampleRate }

    /// Every language one of them speaks, or `nil` when one does not say.
    public var languages: Set<String>? {
        synthesizers.reduce(Set<String>()) { union, synthesizer in synthesizer.languages.flatMap { union?.union($0) } }
    }

    /// The synthesizer that speaks `language`: the first that names it or does not say, else the default.
    public func synthesizer(for language: String?) -> any SpeechSynthesizer {
        guard let language else { return synthesizers[0] }
        return synthesizers.first { $0.languages?.contains(language) ?? true } ?? synthesizers[0]
    }

    /// Synthesises `text` with the synthesizer for `options.language`, at `sampleRate`.
    public func synthesize(_ text: String, options: SpeechOptions) -> AsyncThrowingStream<[Int16], any Error> {
        let synthesizer = synthesizer(for: options.language)
        let stream = synthesizer.synthesize(text, options: options)
        guard synthesizer.sampleRate != sampleRate else { return stream }
        let made = makeResampler(synthesizer.sampleRate, sampleRate)
        return AsyncThrowingStream(bufferingPolicy: .unbounded) { continuation in
            let producer = Task {
                var resampler = made
                do {
                    for try await chunk in stream {
                        continuation.yield(SampleConversion.pcm16(resampler.process(SampleConversion.float(chunk))))
                    }
                    continuation.yield(SampleConversion.pcm16(resampler.flush()))
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in producer.cancel() }
        }
    }
}
