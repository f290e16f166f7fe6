import Foundation

/// How a client or an agent tunes interruptions (Parley's `parley_interruption` extension):
/// the fields given replace those of an `InterruptionPolicy.Configuration`, the rest stay.
///
/// ```json
/// {"min_speech_ms": 160, "max_backchannel_ms": 900, "min_voiced_ms": 60, "backchannels": ["mm-hmm", "yeah"], "min_word_confidence": 0.6}
/// ```
public struct InterruptionSettings: Sendable, Hashable, Codable {
    /// Speech shorter than this never stops the agent (`min_speech_ms`).
    public var minimumSpeechMs: Int?
    /// Speech this long interrupts once its words so far are known, unless they are only
    /// backchannels (then at twice this length) (`max_backchannel_ms`).
    public var maximumBackchannelMs: Int?
    /// Gaps in speech up to this long do not end it (`gap_tolerance_ms`).
    public var gapToleranceMs: Int?
    /// Sound with less voicing than this is noise, never an interruption (`min_voiced_ms`).
    public var minimumVoicedMs: Int?
    /// Speech probability that counts while the agent is thinking (`threshold`).
    public var threshold: Double?
    /// Speech probability that counts while the agent's audio plays (`playback_threshold`).
    public var playbackThreshold: Double?
    /// Words and phrases that only acknowledge (`backchannels`); an empty list makes every
    /// worded sound an interruption.
    public var backchannels: [String]?
    /// Speech whose every word the recognizer was less sure of than this lets the agent go on
    /// (`min_word_confidence`, 0…1; 0 turns the rule off).
    public var minimumWordConfidence: Double?

    enum CodingKeys: String, CodingKey {
        case minimumSpeechMs = "min_speech_ms", maximumBackchannelMs = "max_backchannel_ms"
        case gapToleranceMs = "gap_tolerance_ms", minimumVoicedMs = "min_voiced_ms", threshold, playbackThreshold = "playback_threshold", backchannels
        case minimumWordConfidence = "min_word_confidence"
    }

    /// Creates settings; every field left out keeps the configuration's value.
    public init(
        minimumSpeechMs: Int? = nil, maximumBackchannelMs: Int? = nil, gapToleranceMs: Int? = nil, minimumVoicedMs: Int? = nil,
        threshold: Double? = nil, playbackThreshold: Double? = nil, backchannels: [String]? = nil, minimumWordConfidence: Double? = nil
    ) {
        self.minimumSpeechMs = minimumSpeechMs
        self.maximumBackchannelMs = maximumBackchannelMs
        self.gapToleranceMs = gapToleranceMs
        self.minimumVoicedMs = minimumVoicedMs
        self.threshold = threshold
        self.playbackThreshold = playbackThreshold
        self.backchannels = backchannels
        self.minimumWordConfidence = minimumWordConfidence
    }

    /// `configuration` with the fields given here replaced.
    public func applied(to configuration: InterruptionPolicy.Configuration) -> InterruptionPolicy.Configuration {
        var configuration = configuration
        if let minimumSpeechMs { configuration.minimumSpeechMs = minimumSpeechMs }
        if let maximumBackchannelMs { configuration.maximumBackchannelMs = maximumBackchannelMs }
        if let gapToleranceMs { configuration.gapToleranceMs = gapToleranceMs }
        if let minimumVoicedMs { configuration.minimumVoicedMs = minimumVoicedMs }
        if let threshold { configuration.threshold = Float(threshold) }
        if let playbackThreshold { configuration.playbackThreshold = Float(playbackThreshold) }
        if let backchannels { configuration.backchannels = backchannels }
        if let minimumWordConfidence { configuration.minimumWordConfidence = Float(minimumWordConfidence) }
        return configuration
    }

    /// What is wrong with these settings, one `(field, problem)` pair each.
    public func validationProblems() -> [(field: String, problem: String)] {
        var problems: [(field: String, problem: String)] = []
        for (field, value) in [("min_speech_ms", minimumSpeechMs), ("max_backchannel_ms", maximumBackchannelMs), ("gap_tolerance_ms", gapToleranceMs), ("min_voiced_ms", minimumVoicedMs)] {
            if let value, !(0...10_000).contains(value) { problems.append((field, "\(value) is outside 0…10000.")) }
        }
        for (field, value) in [("threshold", threshold), ("playback_threshold", playbackThreshold), ("min_word_confidence", minimumWordConfidence)] {
            if let value, !(0...1).contains(value) { problems.append((field, "\(value) is outside 0…1.")) }
        }
        if let minimumSpeechMs, let maximumBackchannelMs, maximumBackchannelMs < minimumSpeechMs {
            problems.append(("max_backchannel_ms", "must be at least min_speech_ms (\(minimumSpeechMs))."))
        }
        if let backchannels {
            if backchannels.count > 200 { problems.append(("backchannels", "at most 200 phrases (got \(backchannels.count)).")) }
            if let long = backchannels.first(where: { $0.count > 64 }) {
                problems.append(("backchannels", "a phrase has at most 64 characters (\"\(long.prefix(20))…\")."))
            }
        }
        return problems
    }
}
