import ParleyCore
import ParleyLocal

/// The question every caller asks in the capacity benchmarks with the defaults, spoken by the
/// flite voice Parley embeds.
enum DefaultsQuestion {
    static let text = "What is the weather like in Paris today?"

    /// The spoken question at flite's own rate; each benchmark brings it to its door's rate and
    /// ends it on its last voiced sample (`EndOfSpeech`).
    /// - Throws: when flite does not load or fails.
    static func spoken() async throws -> (samples: [Float], sampleRate: Int) {
        let flite = try FliteSpeechSynthesizer()
        var speech: [Int16] = []
        for try await chunk in flite.synthesize(text, options: SpeechOptions()) { speech += chunk }
        return (SampleConversion.float(speech), flite.sampleRate)
    }
}
