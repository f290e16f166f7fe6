/// A call's outgoing audio: Opus frames queued by the session side, taken one per 20 ms by
/// the event loop, with the milliseconds of each item actually sent (the heard-text rule
/// uses them). A value guarded by its call's lock.
struct RTCOutgoingAudio {
    struct Frame {
        var packet: [UInt8]
        var responseID: String
        var itemID: String
    }

    /// Queued frames, oldest first.
    private(set) var frames: [Frame] = []
    private var head = 0
    /// The response whose audio is going out now (between `outputStarted` and `outputStopped`).
    private(set) var playingResponseID: String?
    /// Milliseconds sent per item, for the items of the playing response.
    private var sentMilliseconds: [String: Int] = [:]
    private var lastItemID: String?

    var isEmpty: Bool { head == frames.count }

    mutating func append(_ frame: Frame) {
        frames.append(frame)
    }

    /// The next frame to send, with the response it starts (if it starts one).
    mutating func takeFrame() -> (frame: Frame, starts: String?, stops: String?)? {
        guard head < frames.count else { return nil }
        let frame = frames[head]
        head += 1
        if head > 256 {
            frames.removeFirst(head)
            head = 0
        }
        var starts: String?, stops: String?
        if playingResponseID != frame.responseID {
            if let previous = playingResponseID { stops = previous }
            playingResponseID = frame.responseID
            sentMilliseconds = [:]
            starts = frame.responseID
        }
        sentMilliseconds[frame.itemID, default: 0] += 20
        lastItemID = frame.itemID
        return (frame, starts, stops)
    }

    /// Called when nothing is queued: the playing response (if any) has stopped.
    mutating func finishPlaying() -> String? {
        defer { playingResponseID = nil }
        return playingResponseID
    }

    /// Drops everything queued; what the playing item had sent.
    mutating func clear() -> RTCSentAudio? {
        let waiting = head < frames.count ? frames[head] : nil
        frames.removeAll()
        head = 0
        defer {
            playingResponseID = nil
            sentMilliseconds = [:]
        }
        guard let responseID = playingResponseID, let itemID = lastItemID else {
            // Queued but not begun: none of it was heard.
            return waiting.map { RTCSentAudio(responseID: $0.responseID, itemID: $0.itemID, sentMilliseconds: 0) }
        }
        return RTCSentAudio(responseID: responseID, itemID: itemID, sentMilliseconds: sentMilliseconds[itemID] ?? 0)
    }
}
