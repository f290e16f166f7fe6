#if !canImport(Darwin)
import Foundation
import ParleyNet

/// A realtime socket on ParleyNet's libwebsockets client (Linux, where `URLSessionWebSocketTask`
/// does not work).
struct LibWebsocketsRealtimeSocket: RealtimeSocket {
    let connection: WebSocketConnection

    /// Connects and completes the handshake.
    /// - Throws: `RealtimeSocketError.rejected` with the HTTP status when the server refused
    ///   the upgrade, `.failed` otherwise.
    static func connect(url: URL, headers: [(String, String)], maxMessageSize: Int) async throws -> LibWebsocketsRealtimeSocket {
        do {
            let connection = try await WebSocketClient.connect(
                to: url, headers: HTTPHeaders(headers), maxMessageSize: maxMessageSize
            )
            return LibWebsocketsRealtimeSocket(connection: connection)
        } catch WebSocketError.connectionFailed(let reason) {
            if let status = httpStatus(in: reason) { throw RealtimeSocketError.rejected(status: status, reason: reason) }
            throw RealtimeSocketError.failed(reason)
        } catch WebSocketError.invalidURL(let text) {
            throw RealtimeSocketError.failed("\(text) is not a ws:// or wss:// URL")
        }
    }

    /// The status libwebsockets reports at the end of a failed handshake's reason, as in
    /// `"… (HTTP 401)"`.
    static func httpStatus(in reason: String) -> Int? {
        guard let marker = reason.range(of: "(HTTP ", options: .backwards) else { return nil }
        let digits = reason[marker.upperBound...].prefix { $0.isNumber }
        return Int(digits)
    }

    func receive() async throws -> RealtimeSocketMessage? {
        var iterator = connection.messages.makeAsyncIterator()
        switch await iterator.next() {
        case .text(let text)?: return .text(text)
        case .binary?: return .binary
        case nil: return nil
        }
    }

    func send(_ text: String) throws {
        try connection.send(.text(text))
    }

    func close() {
        connection.close(code: WebSocketCloseCode.normal)
    }

    var closeCode: Int? { connection.closeCode.map(Int.init) }
}
#endif
