import Foundation

/// Options for one synthesis request.
public struct SpeechOptions: Sendable, Hashable, Codable {
    /// A provider-specific voice name; `nil` means the provider's default.
    public var voice: String?
    /// Speaking rate, 1.0 is normal.
    public var speed: Double
    /// The language of the text (ISO-639-1), or `nil` for the synthesizer's own.
    public var language: String?

    /// Creates synthesis options.
    public init(voice: String? = nil, speed: Double = 1.0, language: String? = nil) {
        self.voice = voice
        self.speed = speed
        self.language = language
    }
}

/// Turns text into speech, streaming audio as it is produced.
public protocol SpeechSynthesizer: Sendable {
    /// The sample rate of the audio the synthesizer yields (mono, 16-bit).
    var sampleRate: Int { get }
    /// The languages (ISO-639-1 codes) it speaks, or `nil` when it does not say (a remote
    /// service speaks whatever its model knows).
    var languages: Set<String>? { get }
    /// Synthesises `text`, yielding mono PCM16 chunks at `sampleRate` as they are ready.
    /// Cancelling the consuming task stops synthesis. Errors are `ProviderError`s.
    func synthesize(_ text: String, options: SpeechOptions) -> AsyncThrowingStream<[Int16], any Error>
}

extension SpeechSynthesizer {
    /// Does not say.
    public var languages: Set<String>? { nil }
}
