/// A small reordering jitter buffer for one incoming audio stream: packets go in as they
/// arrive, frames come out in sequence order as soon as they are next, and a missing sequence
/// number is waited for while at most `depth` later packets wait, then comes out as a loss to
/// conceal (with the next packet, for Opus FEC).
///
/// A pure value: packets in, actions out. Late packets (older than what was released) and
/// duplicates are dropped; a jump of more than `resetGap` starts the stream over.
public struct JitterBuffer: Sendable {
    /// What to do with the stream next, in order.
    public enum Output: Sendable, Equatable {
        /// Decode this packet.
        case packet([UInt8])
        /// A packet is missing: conceal it, with `next` (the following packet) for FEC when known.
        case lost(next: [UInt8]?)
    }

    /// How many later packets may wait for a missing one before it is concealed (3 × 20 ms by
    /// default). Packets in sequence pass at once: what reads them is a recogniser, not a
    /// loudspeaker that needs an even pace, so holding them back would only add latency.
    public let depth: Int
    /// A sequence jump larger than this restarts the stream instead of concealing the gap.
    public let resetGap: Int
    private var waiting: [UInt16: [UInt8]] = [:]
    private var nextSequence: UInt16?

    /// Creates a buffer that waits for a missing packet while at most `depth` later ones wait.
    public init(depth: Int = 3, resetGap: Int = 50) {
        self.depth = depth
        self.resetGap = resetGap
    }

    /// Adds a packet and returns what can be played now.
    public mutating func insert(sequenceNumber: UInt16, payload: [UInt8]) -> [Output] {
        if let next = nextSequence {
            let distance = Int(Int16(bitPattern: sequenceNumber &- next))
            if distance < 0 { return [] }
            if distance > resetGap {
                waiting.removeAll()
                nextSequence = sequenceNumber
            }
        } else {
            nextSequence = sequenceNumber
        }
        guard waiting[sequenceNumber] == nil else { return [] }
        waiting[sequenceNumber] = payload
        return release(whileMoreThan: depth)
    }

    /// Releases every waiting packet (the stream paused or ended), concealing gaps between them.
    public mutating func drain() -> [Output] {
        release(whileMoreThan: 0)
    }

    /// Releases packets in sequence order: each one that is next at once, and a loss for a gap
    /// once more than `kept` packets wait behind it.
    private mutating func release(whileMoreThan kept: Int) -> [Output] {
        var output: [Output] = []
        while let next = nextSequence {
            if let payload = waiting.removeValue(forKey: next) {
                output.append(.packet(payload))
            } else if waiting.count > kept {
                output.append(.lost(next: waiting[next &+ 1]))
            } else {
                break
            }
            nextSequence = next &+ 1
        }
        return output
    }
}
