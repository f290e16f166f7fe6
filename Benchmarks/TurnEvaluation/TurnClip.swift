import Foundation

/// One clip of the turn-taking corpus with its ground truth, at 16 kHz mono. Sample indexes
/// count from the clip's first sample; a harness that plays silence before the clip adds it.
public struct TurnClip: Sendable {
    /// The corpus sample rate.
    public static let sampleRate = 16_000

    public var recipe: TurnClipRecipe
    /// The audio, speech and noise mixed.
    public var samples: [Float]
    /// Each spoken segment's voiced span (from the clean speech, before any noise), in order.
    public var voicedSpans: [Range<Int>]
    /// Each synthesised sound's span, in order.
    public var soundSpans: [Range<Int>]

    /// What kind of clip it is.
    public var kind: TurnClipKind { recipe.kind }
    /// What is said.
    public var text: String { recipe.text }
    /// Where the first sound (voice or noise burst) begins.
    public var onsetSample: Int { (voicedSpans + soundSpans).map(\.lowerBound).min() ?? 0 }
    /// Just after the last voiced sample: where the thought ends.
    public var thoughtEndSample: Int { voicedSpans.last?.upperBound ?? samples.count }
    /// For a mid-thought clip: from the end of the first voiced part to the start of the next.
    public var midThoughtPause: Range<Int>? {
        guard kind == .midThoughtPause, voicedSpans.count >= 2 else { return nil }
        return voicedSpans[0].upperBound..<voicedSpans[1].lowerBound
    }

    /// Milliseconds of `samples` index `sample`.
    public static func milliseconds(_ sample: Int) -> Double { Double(sample) * 1000 / Double(sampleRate) }

    /// The clip's duration in milliseconds.
    public var durationMs: Double { Self.milliseconds(samples.count) }

    /// The ground truth as cached beside the clip's WAV file.
    struct GroundTruth: Codable {
        var recipe: TurnClipRecipe
        var sampleCount: Int
        var voicedSpans: [Range<Int>]
        var soundSpans: [Range<Int>]
    }

    var groundTruth: GroundTruth {
        GroundTruth(recipe: recipe, sampleCount: samples.count, voicedSpans: voicedSpans, soundSpans: soundSpans)
    }
}
