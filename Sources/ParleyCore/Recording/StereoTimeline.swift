import Foundation

/// Lays a call's two sides on one clock: the user's audio on the left channel, the agent's on
/// the right, as interleaved stereo frames ready to be written.
///
/// The clock is the user's audio stream, the one the session already measures playback and
/// barge-in on (see `PlaybackEstimate`): a client sends its microphone in real time and plays
/// the agent's audio as it arrives. Agent audio received when the user's stream stood at frame
/// `n` starts playing at `n`, or after the agent audio before it. It waits here until the
/// user's stream passes it, so audio that was sent but never heard (cut by an interruption)
/// can still be dropped; only frames the clock has passed come out. A push-to-talk client sends
/// audio only while the user talks: there the agent's reply is laid after the user's turn, in
/// the pause its stream skips, and the user's next audio follows it.
struct StereoTimeline: Sendable {
    /// A stretch of agent audio waiting for the clock.
    private struct AgentSpan: Sendable {
        var itemID: String
        /// Timeline frame of the first sample.
        var startFrame: Int
        /// Offset of the first sample within its item's audio, in frames.
        var itemOffset: Int
        var samples: [Int16]
        var endFrame: Int { startFrame + samples.count }
    }

    /// Frames the clock has passed (all written out).
    private(set) var userFrames = 0
    private var pending: [AgentSpan] = []
    /// Where the agent audio queued so far ends playing.
    private var agentEndFrame = 0
    /// Frames of audio received per agent item, and the cut each item has, if any.
    private var itemFrames: [String: Int] = [:]
    private var itemLimits: [String: Int] = [:]
    private var itemOrder: [String] = []

    /// Frames per second on both channels.
    let sampleRate: Int

    init(sampleRate: Int) { self.sampleRate = sampleRate }

    /// Agent audio waiting for the clock, in frames.
    var pendingAgentFrames: Int { pending.reduce(0) { $0 + $1.samples.count } }

    /// Adds the user's next samples; returns the stereo frames they complete.
    /// - Parameter afterAgent: the client sends audio only while the user talks (push-to-talk):
    ///   agent audio still waiting was played before these samples, in the pause the stream skips.
    mutating func appendUser(_ samples: [Int16], afterAgent: Bool = false) -> [Int16] {
        let played = afterAgent ? drainAgent() : []
        let frames = played + mix(left: samples, count: samples.count)
        userFrames += samples.count
        return frames
    }

    /// Queues agent audio of `itemID`, sent now.
    mutating func appendAgent(_ samples: [Int16], itemID: String) {
        guard !samples.isEmpty else { return }
        if itemFrames[itemID] == nil {
            itemOrder.append(itemID)
            // Only recent items can still be cut; older ones are long played.
            if itemOrder.count > 16 {
                let old = itemOrder.removeFirst()
                itemFrames[old] = nil
                itemLimits[old] = nil
            }
        }
        let offset = itemFrames[itemID, default: 0]
        itemFrames[itemID] = offset + samples.count
        var kept = samples
        if let limit = itemLimits[itemID] {
            kept = Array(samples.prefix(max(0, limit - offset)))
        }
        guard !kept.isEmpty else { return }
        let start = max(userFrames, agentEndFrame)
        pending.append(AgentSpan(itemID: itemID, startFrame: start, itemOffset: offset, samples: kept))
        agentEndFrame = start + kept.count
    }

    /// Keeps only the first `milliseconds` of `itemID`'s audio: what the listener heard.
    mutating func cutAgent(itemID: String, afterMilliseconds milliseconds: Int) {
        let limit = max(0, milliseconds) * sampleRate / 1000
        itemLimits[itemID] = min(itemLimits[itemID] ?? limit, limit)
        pending = pending.compactMap { span in
            guard span.itemID == itemID else { return span }
            var span = span
            span.samples = Array(span.samples.prefix(max(0, limit - span.itemOffset)))
            return span.samples.isEmpty ? nil : span
        }
        agentEndFrame = max(userFrames, pending.last?.endFrame ?? 0)
    }

    /// Everything still queued, as played after the user's audio ends (silence on the left).
    mutating func drainAgent() -> [Int16] {
        let end = pending.last?.endFrame ?? userFrames
        let count = max(0, end - userFrames)
        let frames = mix(left: [], count: count)
        userFrames += count
        return frames
    }

    /// Interleaves `count` frames from the clock's position: `left` (silence past its end) and
    /// the agent audio playing then; the agent audio consumed leaves the queue.
    private mutating func mix(left: [Int16], count: Int) -> [Int16] {
        var frames = [Int16](repeating: 0, count: count * 2)
        for index in 0..<min(left.count, count) { frames[2 * index] = left[index] }
        let windowEnd = userFrames + count
        var consumed = 0
        for span in pending {
            guard span.startFrame < windowEnd else { break }
            let from = max(span.startFrame, userFrames)
            let to = min(span.endFrame, windowEnd)
            if from < to {
                for frame in from..<to { frames[2 * (frame - userFrames) + 1] = span.samples[frame - span.startFrame] }
            }
            if span.endFrame <= windowEnd { consumed += 1 } else { break }
        }
        pending.removeFirst(consumed)
        if let first = pending.first, first.startFrame < windowEnd {
            // The rest of a span that straddles the window stays, starting at the window's end.
            let skip = windowEnd - first.startFrame
            pending[0] = AgentSpan(
                itemID: first.itemID, startFrame: windowEnd, itemOffset: first.itemOffset + skip,
                samples: Array(first.samples[skip...])
            )
        }
        return frames
    }
}
