import Foundation

/// Latencies of one turn, measured from the end of the user's speech (or the moment a
/// response was asked for, for text turns).
public struct TurnMetrics: Sendable, Hashable, Codable {
    /// The response these figures belong to.
    public var responseID: String
    /// End of speech → final transcript, in milliseconds (`nil` for text turns).
    public var transcriptionMs: Double?
    /// End of speech → first token from the language model.
    public var firstTokenMs: Double?
    /// End of speech → the reply's first text chunk handed to speech synthesis.
    public var firstSynthesisMs: Double?
    /// End of speech → first audio chunk out: the server-side voice-to-voice latency.
    public var firstAudioMs: Double?
    /// Tokens the model produced.
    public var completionTokens: Int?
    /// Seconds of audio the recognizer processed.
    public var recognizedAudioSeconds: Double?
    /// Seconds of speech synthesised.
    public var synthesizedAudioSeconds: Double

    /// Creates turn metrics.
    public init(
        responseID: String, transcriptionMs: Double? = nil, firstTokenMs: Double? = nil, firstSynthesisMs: Double? = nil,
        firstAudioMs: Double? = nil,
        completionTokens: Int? = nil, recognizedAudioSeconds: Double? = nil, synthesizedAudioSeconds: Double = 0
    ) {
        self.responseID = responseID
        self.transcriptionMs = transcriptionMs
        self.firstTokenMs = firstTokenMs
        self.firstSynthesisMs = firstSynthesisMs
        self.firstAudioMs = firstAudioMs
        self.completionTokens = completionTokens
        self.recognizedAudioSeconds = recognizedAudioSeconds
        self.synthesizedAudioSeconds = synthesizedAudioSeconds
    }
}

/// p50/p95 of a latency figure over a session's turns.
public struct LatencySummary: Sendable, Hashable, Codable {
    public var count: Int
    public var p50: Double
    public var p95: Double

    /// Summarises `values` (nearest-rank percentiles); `nil` when there are none.
    public init?(_ values: [Double]) {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        func rank(_ p: Double) -> Double { sorted[max(0, min(sorted.count - 1, Int((p * Double(sorted.count)).rounded(.up)) - 1))] }
        count = sorted.count
        p50 = rank(0.5)
        p95 = rank(0.95)
    }
}
