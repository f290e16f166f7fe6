import Foundation
import ParleyCore
import ParleyStore

/// The console's charts, computed from what the store keeps: p50/p95 voice-to-voice latency
/// and sessions started, over a window cut into buckets.
enum ConsoleStats {
    /// The most buckets a window may be cut into.
    static let maximumBuckets = 500

    static func make(turns: [TurnFiguresRecord], callStarts: [Date], from: Date, to: Date, bucketSeconds: Int) -> ConsoleViews.Stats {
        let bucketCount = Int((to.timeIntervalSince(from) / Double(bucketSeconds)).rounded(.up))
        var buckets = (0..<bucketCount).map { index in
            (start: from.addingTimeInterval(Double(index * bucketSeconds)), sessions: 0, voiceToVoice: [Double]())
        }
        func bucket(of date: Date) -> Int? {
            let index = Int(date.timeIntervalSince(from) / Double(bucketSeconds))
            return buckets.indices.contains(index) ? index : nil
        }
        for start in callStarts { if let index = bucket(of: start) { buckets[index].sessions += 1 } }
        for turn in turns {
            if let value = turn.voiceToVoiceMs, let index = bucket(of: turn.turnEndedAt) { buckets[index].voiceToVoice.append(value) }
        }
        return ConsoleViews.Stats(
            from: from.timeIntervalSince1970, to: to.timeIntervalSince1970, bucketSeconds: bucketSeconds, sessions: callStarts.count,
            voiceToVoice: percentiles(turns.compactMap(\.voiceToVoiceMs)), firstAudio: percentiles(turns.compactMap(\.firstAudioMs)),
            buckets: buckets.map {
                ConsoleViews.Bucket(start: $0.start.timeIntervalSince1970, sessions: $0.sessions, voiceToVoice: percentiles($0.voiceToVoice))
            }
        )
    }

    /// Nearest-rank p50 and p95 (as the session's own `LatencySummary`), rounded to 0.1 ms.
    static func percentiles(_ values: [Double]) -> ConsoleViews.Percentiles {
        guard let summary = LatencySummary(values) else { return ConsoleViews.Percentiles(count: 0) }
        return ConsoleViews.Percentiles(count: summary.count, p50: ConsoleViews.tenths(summary.p50), p95: ConsoleViews.tenths(summary.p95))
    }
}
