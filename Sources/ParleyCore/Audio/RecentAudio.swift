import Foundation

/// The newest stretch of an audio stream, addressed by stream time in milliseconds.
///
/// Keeps at least `keepingMs` of audio and trims in batches, so appending costs the same
/// whatever the stream's length.
struct RecentAudio: Sendable {
    private var samples: [Float] = []
    /// Stream time just after the last sample kept.
    private var endMs = 0
    private let keepingMs: Int

    init(keepingMs: Int) { self.keepingMs = keepingMs }

    /// Adds `newSamples` at `rate`, the last of which ends at stream time `endingAtMs`.
    mutating func append(_ newSamples: [Float], rate: Int, endingAtMs: Int) {
        samples += newSamples
        endMs = endingAtMs
        let capacity = keepingMs * rate / 1000
        if samples.count > 2 * capacity { samples.removeFirst(samples.count - capacity) }
    }

    /// The samples from stream time `startMs` to `endMs`, clipped to what is kept.
    func samples(fromMs startMs: Int, toMs requestedEndMs: Int, rate: Int) -> [Float] {
        let firstMs = endMs - samples.count * 1000 / max(rate, 1)
        let from = max(0, (startMs - firstMs) * rate / 1000)
        let to = min(samples.count, max(0, (requestedEndMs - firstMs) * rate / 1000))
        return from < to ? Array(samples[from..<to]) : []
    }
}
