/// A call's outgoing audio: encoded 20 ms frames (Opus on WebRTC, G.711 on SIP) queued by the
/// session side, taken one per 20 ms by the event loop, with the milliseconds of each item
/// actually sent (the heard-text rule uses them). A value guarded by its call's lock.
public struct RTCOutgoingAudio: Sendable {
    /// One encoded 20 ms frame of a response's item.
    public struct Frame: Sendable {
        public var packet: [UInt8]
        public var responseID: String
        public var itemID: String

        /// A frame of `itemID` of `responseID`.
        public init(packet: [UInt8], responseID: String, itemID: String) {
            self.packet = packet
            self.responseID = responseID
            self.itemID = itemID
        }
    }

    /// Queued frames, oldest first.
    public private(set) var frames: [Frame] = []
    private var head = 0
    /// The response whose audio is going out now (between `outputStarted` and `outputStopped`).
    public private(set) var playingResponseID: String?
    /// Responses whose last frame is queued: when the queue runs dry on one of them it has
    /// stopped; on any other the speech only fell behind, and it goes on when more comes.
    private var finishedResponseIDs: Set<String> = []
    /// Milliseconds sent per item, for the items of the playing response.
    private var sentMilliseconds: [String: Int] = [:]
    private var lastItemID: String?
    /// Whether the audio is held (`pause()`): the user may be interrupting, and the session
    /// decides whether the agent goes on (`resume()`) or stops (`clear()`).
    public private(set) var isPaused = false

    /// An empty queue.
    public init() {}

    /// Whether no frame waits.
    public var isEmpty: Bool { head == frames.count }

    /// Holds the audio: nothing is taken until `resume()` or `clear()`, and the playing
    /// response neither stops nor counts milliseconds meanwhile.
    public mutating func pause() { isPaused = true }

    /// Lets held audio go on from where it was held.
    public mutating func resume() { isPaused = false }

    /// Queues a frame.
    public mutating func append(_ frame: Frame) {
        frames.append(frame)
    }

    /// The next frame to send, with the response it starts (if it starts one).
    public mutating func takeFrame() -> (frame: Frame, starts: String?, stops: String?)? {
        guard !isPaused, head < frames.count else { return nil }
        let frame = frames[head]
        head += 1
        if head > 256 {
            frames.removeFirst(head)
            head = 0
        }
        var starts: String?, stops: String?
        if playingResponseID != frame.responseID {
            if let previous = playingResponseID {
                stops = previous
                finishedResponseIDs.remove(previous)
            }
            playingResponseID = frame.responseID
            sentMilliseconds = [:]
            starts = frame.responseID
        }
        sentMilliseconds[frame.itemID, default: 0] += 20
        lastItemID = frame.itemID
        return (frame, starts, stops)
    }

    /// Marks a response's speech as complete: its last frame is queued.
    public mutating func finish(responseID: String) {
        finishedResponseIDs.insert(responseID)
        if finishedResponseIDs.count > 64 { finishedResponseIDs = [responseID] }
    }

    /// Called when nothing is queued: the playing response, if it has stopped (its speech is
    /// complete). A response whose speech is still being made has only fallen behind: it
    /// stays playing, and the milliseconds it sent keep counting.
    public mutating func finishPlaying() -> String? {
        guard !isPaused, let responseID = playingResponseID, finishedResponseIDs.remove(responseID) != nil else { return nil }
        playingResponseID = nil
        return responseID
    }

    /// Drops everything queued and any hold; what the playing item had sent.
    public mutating func clear() -> RTCSentAudio? {
        let waiting = head < frames.count ? frames[head] : nil
        frames.removeAll()
        head = 0
        isPaused = false
        defer {
            if let playingResponseID { finishedResponseIDs.remove(playingResponseID) }
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
