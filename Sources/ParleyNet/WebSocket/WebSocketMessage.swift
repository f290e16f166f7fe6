import Foundation

/// One complete WebSocket message (fragments already reassembled).
public enum WebSocketMessage: Sendable, Equatable {
    /// A text message.
    case text(String)
    /// A binary message.
    case binary(Data)

    /// The payload size in bytes.
    var byteCount: Int {
        switch self {
        case .text(let text): text.utf8.count
        case .binary(let data): data.count
        }
    }
}

/// Why a WebSocket operation failed.
public enum WebSocketError: Error, Sendable, Equatable {
    /// The connection is closed (or closing); nothing more can be sent.
    case closed
    /// The outgoing queue is full because the peer is not reading; the connection was closed
    /// with code 1008.
    case backpressure
    /// The client could not connect or the handshake failed; `reason` says why.
    case connectionFailed(reason: String)
    /// The URL is not a `ws://` or `wss://` URL with a host.
    case invalidURL(String)
}

/// Close codes used by ParleyNet (RFC 6455 section 7.4.1).
public enum WebSocketCloseCode {
    /// Normal closure.
    public static let normal: UInt16 = 1000
    /// The endpoint is going away (server shutdown).
    public static let goingAway: UInt16 = 1001
    /// Protocol error.
    public static let protocolError: UInt16 = 1002
    /// The connection ended without a close frame (never sent on the wire).
    public static let abnormal: UInt16 = 1006
    /// Policy violation; ParleyNet uses it for a peer that stopped reading.
    public static let policyViolation: UInt16 = 1008
    /// A message exceeded the maximum size.
    public static let messageTooBig: UInt16 = 1009
    /// The server hit an unexpected condition.
    public static let internalError: UInt16 = 1011
}
