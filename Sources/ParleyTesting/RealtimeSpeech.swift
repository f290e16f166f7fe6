import Foundation
import ParleyCore

/// Test speech as the realtime protocol carries it: pcm16 at 24 kHz, mono, base64, in
/// `input_audio_buffer.append` events.
///
/// ```swift
/// let speech = try await TestVoice.flite("slt").speak("What is the capital of France?")
/// for event in RealtimeSpeech.appendEvents(speech) { try socket.send(.text(event)) }
/// ```
public enum RealtimeSpeech {
    /// The protocol's sample rate.
    public static let sampleRate = 24_000

    /// The `input_audio_buffer.append` events (JSON text) that carry `samples`.
    /// - Parameters:
    ///   - samples: mono audio in [-1, 1].
    ///   - sampleRate: the rate of `samples` (`TestVoice`'s 16 kHz by default).
    ///   - chunkMilliseconds: how much audio each event carries.
    public static func appendEvents(_ samples: [Float], sampleRate: Int = TestVoice.sampleRate, chunkMilliseconds: Int = 200) -> [String] {
        var resampler = VoiceSessionProviders.sincResampler(from: sampleRate, to: Self.sampleRate)
        let audio = SampleConversion.pcm16(sampleRate == Self.sampleRate ? samples : resampler.process(samples) + resampler.flush())
        let chunk = max(1, Self.sampleRate * chunkMilliseconds / 1_000)
        return stride(from: 0, to: audio.count, by: chunk).map { start in
            let base64 = PCM16Buffer(samples: Array(audio[start..<min(start + chunk, audio.count)])).base64EncodedString()
            return #"{"type":"input_audio_buffer.append","audio":"\#(base64)"}"#
        }
    }
}
