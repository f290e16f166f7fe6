import Foundation

/// Remembers which stretch of a response's audio speaks which piece of its text, so an
/// interrupted reply can be cut to exactly what the listener heard.
public struct SpokenTextTracker: Sendable, Hashable {
    private struct Span: Sendable, Hashable {
        var text: String
        var startSample: Int
        var endSample: Int
    }

    private var spans: [Span] = []
    /// Samples of audio sent so far.
    public private(set) var sentSamples = 0
    /// The output sample rate.
    public let sampleRate: Int

    /// Creates a tracker for audio at `sampleRate`.
    public init(sampleRate: Int) { self.sampleRate = sampleRate }

    /// Records that `sampleCount` more samples were sent, all speaking `text`.
    /// Call once per synthesised segment with its total, or repeatedly with the same text.
    public mutating func recordAudio(sampleCount: Int, speaking text: String) {
        if let last = spans.last, last.text == text, last.endSample == sentSamples {
            spans[spans.count - 1].endSample += sampleCount
        } else {
            spans.append(Span(text: text, startSample: sentSamples, endSample: sentSamples + sampleCount))
        }
        sentSamples += sampleCount
    }

    /// Milliseconds of audio sent so far.
    public var sentMilliseconds: Int { sentSamples * 1000 / max(sampleRate, 1) }

    /// The text heard by a listener who played `milliseconds` of the audio: whole segments
    /// that finished, plus the words of the segment in progress in proportion to its playback.
    public func heardText(upToMilliseconds milliseconds: Int) -> String {
        let playedSamples = min(sentSamples, max(0, milliseconds) * sampleRate / 1000)
        var pieces: [String] = []
        for span in spans where span.startSample < playedSamples {
            if span.endSample <= playedSamples {
                pieces.append(span.text)
            } else {
                let fraction = Double(playedSamples - span.startSample) / Double(max(span.endSample - span.startSample, 1))
                let words = span.text.split(separator: " ", omittingEmptySubsequences: true)
                let heardWords = Int((Double(words.count) * fraction).rounded(.down))
                if heardWords > 0 { pieces.append(words.prefix(heardWords).joined(separator: " ")) }
            }
        }
        return pieces.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " ")
    }
}
