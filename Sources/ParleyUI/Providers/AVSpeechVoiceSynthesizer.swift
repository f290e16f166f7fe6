#if canImport(SwiftUI)
import AVFoundation
import Foundation
import ParleyCore

/// On-device speech from the system's voices (`AVSpeechSynthesizer`), streamed as pcm16 at
/// 24 kHz as the voice produces it: a `SpeechSynthesizer` for a session that runs on the device.
///
/// `SpeechOptions.voice` is an `AVSpeechSynthesisVoice` identifier (for example
/// `com.apple.voice.compact.en-US.Samantha`); without one the language's default voice speaks.
public struct AVSpeechVoiceSynthesizer: SpeechSynthesizer {
    public let sampleRate = 24_000
    /// The BCP 47 language of the default voice.
    public var language: String

    /// Creates a synthesizer speaking `language` unless a voice is asked for.
    public init(language: String = "en-US") {
        self.language = language
    }

    public func synthesize(_ text: String, options: SpeechOptions) -> AsyncThrowingStream<[Int16], any Error> {
        let utterance = AVSpeechUtterance(string: text)
        utterance.voice = options.voice.flatMap(AVSpeechSynthesisVoice.init(identifier:)) ?? AVSpeechSynthesisVoice(language: language)
        utterance.rate = min(
            max(AVSpeechUtteranceDefaultSpeechRate * Float(options.speed), AVSpeechUtteranceMinimumSpeechRate),
            AVSpeechUtteranceMaximumSpeechRate
        )
        let words = text.trimmingCharacters(in: .whitespacesAndNewlines)
        // Unbounded: a sentence is a few hundred kilobytes at most, consumed as it comes.
        return AsyncThrowingStream(bufferingPolicy: .unbounded) { continuation in
            guard !words.isEmpty else {
                continuation.finish()
                return
            }
            let job = SpeechSynthesisJob(continuation: continuation, sampleRate: Double(sampleRate))
            continuation.onTermination = { _ in job.stop() }
            job.start(utterance)
        }
    }
}

/// One utterance being written to buffers: converts each to the output format and ends the
/// stream at the empty buffer that closes the utterance.
final class SpeechSynthesisJob: @unchecked Sendable {
    // @unchecked Sendable: `synthesizer`, `converter` and `continuation` are guarded by `lock`.
    private let lock = NSLock()
    private let outputFormat: AVAudioFormat?
    private var synthesizer: AVSpeechSynthesizer?
    private var converter: PCMConverter?
    private var continuation: AsyncThrowingStream<[Int16], any Error>.Continuation?

    init(continuation: AsyncThrowingStream<[Int16], any Error>.Continuation, sampleRate: Double) {
        self.continuation = continuation
        outputFormat = AVAudioFormat(commonFormat: .pcmFormatInt16, sampleRate: sampleRate, channels: 1, interleaved: true)
    }

    func start(_ utterance: AVSpeechUtterance) {
        let synthesizer = AVSpeechSynthesizer()
        lock.withLock { self.synthesizer = synthesizer }
        synthesizer.write(utterance) { [self] buffer in
            self.receive(buffer)
        }
    }

    /// The synthesizer's thread: one more buffer, or the empty one that ends the utterance.
    private func receive(_ buffer: AVAudioBuffer) {
        lock.withLock {
            guard let continuation else { return }
            guard let pcm = buffer as? AVAudioPCMBuffer, pcm.frameLength > 0 else {
                continuation.finish()
                end()
                return
            }
            do {
                if converter?.inputFormat != pcm.format {
                    guard let outputFormat, let made = PCMConverter(from: pcm.format, to: outputFormat) else {
                        throw AudioConversionError(message: "the voice's format \(pcm.format) cannot be converted")
                    }
                    converter = made
                }
                let samples = PCMConverter.int16Samples(of: try converter!.convert(pcm))
                if !samples.isEmpty { continuation.yield(samples) }
            } catch {
                continuation.finish(throwing: ProviderError(.server, provider: "avspeech", message: "Speech synthesis failed: \(error)"))
                end()
            }
        }
    }

    /// The consumer went away: stop speaking now.
    func stop() {
        let synthesizer = lock.withLock { () -> AVSpeechSynthesizer? in
            defer { end() }
            return self.synthesizer
        }
        synthesizer?.stopSpeaking(at: .immediate)
    }

    /// Forgets the synthesizer and the stream (call with `lock` held).
    private func end() {
        continuation = nil
        synthesizer = nil
        converter = nil
    }
}
#endif
