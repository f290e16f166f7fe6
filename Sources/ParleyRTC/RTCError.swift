/// A failure of the WebRTC machinery itself (not of a peer's input, which ends only its call).
public enum RTCError: Error, Sendable, CustomStringConvertible {
    /// OpenSSL, libsrtp or usrsctp refused an operation.
    case crypto(String)
    /// The UDP socket could not be opened or bound.
    case socket(String)
    /// libopus refused to create a codec.
    case codec(String)

    public var description: String {
        switch self {
        case .crypto(let step): "WebRTC security setup failed: \(step)"
        case .socket(let step): "WebRTC UDP socket: \(step)"
        case .codec(let step): "Opus: \(step)"
        }
    }
}
