import Foundation

/// What the caller has heard of the agent's audio, from Twilio's echoed marks. A mark follows
/// every chunk of audio sent; Twilio echoes it once that chunk has played, so the last echoed
/// mark of an item says how much of the item the caller heard. A pure value: calls in, answers out.
struct TwilioPlayback: Sendable {
    /// An item whose buffered audio was dropped, and how much of it had played.
    struct Cut: Sendable, Hashable {
        var itemID: String
        var heardMs: Int
    }

    private struct PendingMark: Sendable, Hashable {
        var name: String
        var itemID: String
        var endSample: Int
    }

    /// The rate of the session's output audio, which the item positions count in.
    let sampleRate: Int
    private var nextMark = 1
    /// Marks sent and not yet echoed, oldest first.
    private var pending: [PendingMark] = []
    /// Output samples sent per item, for the most recent items.
    private var sentSamples: [String: Int] = [:]
    /// Samples heard per item (up to its last echoed mark).
    private var heardSamples: [String: Int] = [:]
    private var recentItems: [String] = []

    init(sampleRate: Int) { self.sampleRate = sampleRate }

    /// Whether audio sent to Twilio has not finished playing.
    var isPlaying: Bool { !pending.isEmpty }

    /// Records `sampleCount` more samples of `itemID` sent; returns the name of the mark to send after them.
    mutating func sent(sampleCount: Int, itemID: String) -> String {
        if sentSamples[itemID] == nil {
            recentItems.append(itemID)
            if recentItems.count > 8 {
                let oldest = recentItems.removeFirst()
                sentSamples[oldest] = nil
                heardSamples[oldest] = nil
            }
        }
        let end = (sentSamples[itemID] ?? 0) + sampleCount
        sentSamples[itemID] = end
        let name = "parley-\(nextMark)"
        nextMark += 1
        pending.append(PendingMark(name: name, itemID: itemID, endSample: end))
        return name
    }

    /// Twilio echoed `name`: its audio and everything sent before it has played.
    /// - Returns: `false` for a name that is not pending (unknown, already echoed or cleared).
    @discardableResult
    mutating func acknowledged(_ name: String) -> Bool {
        guard let index = pending.firstIndex(where: { $0.name == name }) else { return false }
        for mark in pending[...index] where sentSamples[mark.itemID] != nil {
            heardSamples[mark.itemID] = max(heardSamples[mark.itemID] ?? 0, mark.endSample)
        }
        pending.removeFirst(index + 1)
        return true
    }

    /// Milliseconds of `itemID` heard so far.
    func heardMilliseconds(of itemID: String) -> Int {
        (heardSamples[itemID] ?? 0) * 1000 / max(sampleRate, 1)
    }

    /// The buffered audio is dropped (a `clear` was sent, or the call ended): the items it
    /// belonged to, with what of each was heard. Marks Twilio echoes from now on are ignored.
    mutating func clear() -> [Cut] {
        var cuts: [Cut] = []
        for mark in pending where !cuts.contains(where: { $0.itemID == mark.itemID }) {
            cuts.append(Cut(itemID: mark.itemID, heardMs: heardMilliseconds(of: mark.itemID)))
        }
        pending.removeAll()
        return cuts
    }
}
