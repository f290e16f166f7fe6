import Foundation
import ParleyCore
import Testing

/// The voice follows the language: each language is spoken by the first synthesizer that
/// speaks it, the default speaks the rest, and other rates are resampled to the default's.
@Suite struct MultilingualSpeechSynthesizerTests {
    /// A synthesizer that says one second of its own constant value per text.
    struct Constant: SpeechSynthesizer {
        let sampleRate: Int
        let languages: Set<String>?
        let value: Int16
        func synthesize(_ text: String, options: SpeechOptions) -> AsyncThrowingStream<[Int16], any Error> {
            AsyncThrowingStream { continuation in
                continuation.yield([Int16](repeating: value, count: sampleRate))
                continuation.finish()
            }
        }
    }

    static let voice = MultilingualSpeechSynthesizer(
        [Constant(sampleRate: 24_000, languages: ["en"], value: 1), Constant(sampleRate: 24_000, languages: ["de", "fr"], value: 2)],
        makeResampler: VoiceSessionProviders.sincResampler
    )

    @Test(arguments: [("de", 2), ("fr", 2), ("en", 1), (nil, 1), ("ja", 1)] as [(String?, Int16)])
    func eachLanguageIsSpokenByTheFirstThatSpeaksIt(language: String?, value: Int16) async throws {
        var samples: [Int16] = []
        for try await chunk in Self.voice.synthesize("Hallo.", options: SpeechOptions(language: language)) { samples += chunk }
        #expect(samples.count == 24_000 && samples.allSatisfy { $0 == value })
    }

    @Test func theLanguagesAreEveryOnesAndNoneWhenOneDoesNotSay() {
        #expect(Self.voice.languages == ["en", "de", "fr"])
        let open = MultilingualSpeechSynthesizer(
            [Constant(sampleRate: 24_000, languages: ["en"], value: 1), Constant(sampleRate: 24_000, languages: nil, value: 2)],
            makeResampler: VoiceSessionProviders.sincResampler
        )
        #expect(open.languages == nil)
        #expect(open.synthesizer(for: "ja").languages == nil)
    }

    @Test func anotherRateIsResampledToTheDefaults() async throws {
        let voice = MultilingualSpeechSynthesizer(
            [Constant(sampleRate: 24_000, languages: ["en"], value: 1), Constant(sampleRate: 16_000, languages: ["de"], value: 8_000)],
            makeResampler: VoiceSessionProviders.sincResampler
        )
        #expect(voice.sampleRate == 24_000)
        var samples: [Int16] = []
        for try await chunk in voice.synthesize("Hallo.", options: SpeechOptions(language: "de")) { samples += chunk }
        // One second at 16 kHz is one second at 24 kHz, give or take the filter's edges.
        #expect(abs(samples.count - 24_000) < 200, "\(samples.count)")
        #expect(samples[12_000] > 7_000)
    }
}
