/// What a WebRTC call reports to its owner, in order.
public enum RTCCallEvent: Sendable {
    /// ICE and DTLS are done: media and the data channel can flow.
    case connected
    /// The peer opened a data channel.
    case channelOpened(label: String)
    /// A text message on the data channel.
    case message(String)
    /// A message the call refused (binary, oversized); the call goes on.
    case refusedMessage(String)
    /// An Opus packet of the peer's audio, in arrival order.
    case audio(sequenceNumber: UInt16, payload: [UInt8])
    /// The first packet of a response's audio went out.
    case outputStarted(responseID: String)
    /// The last queued packet of a response's audio went out.
    case outputStopped(responseID: String)
    /// The call is over; nothing follows.
    case ended(reason: String)
}

/// A response's audio the call had sent when its output was cleared.
public struct RTCSentAudio: Sendable, Equatable {
    public var responseID: String
    public var itemID: String
    /// Milliseconds of the item's audio that went out.
    public var sentMilliseconds: Int
}
