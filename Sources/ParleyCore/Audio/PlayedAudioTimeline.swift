import Foundation

/// What the session's output played, placed on the input's time line: the reference an echo
/// canceller subtracts. A chunk sent while earlier audio still plays starts where it ends; one
/// sent after a silence starts when it is sent (a client plays audio as it arrives).
struct PlayedAudioTimeline: Sendable {
    /// Samples from `startSample` on, at the input rate; silence where nothing played.
    private var samples: [Float] = []
    private var startSample = 0

    /// Places `played` (at the input rate), sent when the input stood at sample `sentAtSample`.
    mutating func add(_ played: [Float], sentAtSample: Int) {
        let endSample = startSample + samples.count
        if sentAtSample > endSample { samples += [Float](repeating: 0, count: sentAtSample - endSample) }
        samples += played
    }

    /// What played over input samples `start..<start + count`, and forgets what is older.
    mutating func take(from start: Int, count: Int) -> [Float] {
        var result = [Float](repeating: 0, count: count)
        for index in 0..<count {
            let position = start + index - startSample
            if position >= 0, position < samples.count { result[index] = samples[position] }
        }
        let consumed = min(samples.count, max(0, start + count - startSample))
        if consumed > 0 {
            samples.removeFirst(consumed)
            startSample += consumed
        }
        return result
    }
}
