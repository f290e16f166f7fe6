#if canImport(Darwin)
import Foundation

/// A realtime socket on `URLSessionWebSocketTask` (Apple platforms).
final class URLSessionRealtimeSocket: RealtimeSocket {
    private let task: URLSessionWebSocketTask

    private init(task: URLSessionWebSocketTask) {
        self.task = task
    }

    /// Starts connecting; a refused handshake surfaces from the first `receive()`.
    static func connect(url: URL, headers: [(String, String)], maxMessageSize: Int) -> URLSessionRealtimeSocket {
        var request = URLRequest(url: url)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let task = URLSession.shared.webSocketTask(with: request)
        task.maximumMessageSize = maxMessageSize
        task.resume()
        return URLSessionRealtimeSocket(task: task)
    }

    func receive() async throws -> RealtimeSocketMessage? {
        do {
            switch try await task.receive() {
            case .string(let text): return .text(text)
            case .data: return .binary
            @unknown default: return .binary
            }
        } catch {
            if let status = (task.response as? HTTPURLResponse)?.statusCode, status != 101 {
                throw RealtimeSocketError.rejected(status: status, reason: HTTPURLResponse.localizedString(forStatusCode: status))
            }
            if task.closeCode != .invalid { return nil }
            throw RealtimeSocketError.failed(error.localizedDescription)
        }
    }

    func send(_ text: String) throws {
        task.send(.string(text)) { _ in }
    }

    func close() {
        task.cancel(with: .normalClosure, reason: nil)
    }

    var closeCode: Int? {
        task.closeCode == .invalid ? nil : task.closeCode.rawValue
    }
}
#endif
