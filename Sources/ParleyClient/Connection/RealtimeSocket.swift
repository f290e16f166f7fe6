import Foundation

/// One message received on a realtime socket.
enum RealtimeSocketMessage: Sendable {
    /// A text message: one JSON event.
    case text(String)
    /// A binary message, which the protocol does not use.
    case binary
}

/// Why a realtime socket could not open or stopped.
enum RealtimeSocketError: Error, Sendable {
    /// The server answered the upgrade with this HTTP status instead of 101.
    case rejected(status: Int, reason: String)
    /// The connection could not be made or broke.
    case failed(String)
}

/// An open WebSocket to the realtime endpoint: the libwebsockets client on Linux,
/// `URLSessionWebSocketTask` on Apple platforms.
protocol RealtimeSocket: Sendable {
    /// The next message, or `nil` once the connection closed.
    /// - Throws: `RealtimeSocketError` when the connection failed.
    func receive() async throws -> RealtimeSocketMessage?
    /// Queues a text message; never blocks.
    func send(_ text: String) throws
    /// Starts closing the connection; `receive()` then ends.
    func close()
    /// The close code, once closed, if one is known.
    var closeCode: Int? { get }
}

/// Opens realtime sockets with the platform's WebSocket client.
enum RealtimeSocketFactory {
    /// Connects to `url` with `headers`.
    static func connect(url: URL, headers: [(String, String)], maxMessageSize: Int) async throws -> any RealtimeSocket {
        #if canImport(Darwin)
        return URLSessionRealtimeSocket.connect(url: url, headers: headers, maxMessageSize: maxMessageSize)
        #else
        return try await LibWebsocketsRealtimeSocket.connect(url: url, headers: headers, maxMessageSize: maxMessageSize)
        #endif
    }
}
