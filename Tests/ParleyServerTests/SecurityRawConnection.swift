import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A raw TCP connection for security tests: sends exactly the bytes given (no client-side
/// normalisation of paths or headers), optionally from a chosen loopback source address.
/// Blocking socket calls run on their own thread, never on the cooperative pool the server's
/// handlers need.
final class RawConnection: Sendable {
    let socket: Int32

    private init(socket: Int32) { self.socket = socket }

    /// Connects to `127.0.0.1:port`, from `sourceAddress` when given (any of 127.0.0.0/8).
    static func connect(port: Int, from sourceAddress: String? = nil) async throws -> RawConnection {
        try await onThread {
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard socket >= 0 else { throw UpstreamError.socket("socket", errno) }
            if let sourceAddress {
                var source = sockaddr_in()
                source.sin_family = sa_family_t(AF_INET)
                source.sin_addr.s_addr = inet_addr(sourceAddress)
                let bound = withUnsafePointer(to: &source) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
                guard bound == 0 else {
                    Glibc.close(socket)
                    throw UpstreamError.socket("bind \(sourceAddress)", errno)
                }
            }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                Glibc.close(socket)
                throw UpstreamError.socket("connect", errno)
            }
            return RawConnection(socket: socket)
        }
    }

    /// Sends bytes; `false` when the server has closed the connection.
    @discardableResult
    func send(_ bytes: [UInt8]) async -> Bool {
        let socket = socket
        return await onThread {
            var offset = 0
            while offset < bytes.count {
                let sent = bytes[offset...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard sent > 0 else { return false }
                offset += sent
            }
            return true
        }
    }

    /// Sends text.
    @discardableResult
    func send(_ text: String) async -> Bool { await send(Array(text.utf8)) }

    /// Reads until the server closes the connection or `seconds` pass.
    /// - Returns: the bytes read and whether the server closed the connection.
    func readUntilClosed(seconds: Double) async -> (bytes: [UInt8], closed: Bool) {
        let socket = socket
        return await onThread {
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            let deadline = Date(timeIntervalSinceNow: seconds)
            while Date() < deadline {
                var entry = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
                let ready = poll(&entry, 1, Int32(max(1, min(100, deadline.timeIntervalSinceNow * 1000))))
                guard ready > 0 else { continue }
                let count = recv(socket, &buffer, buffer.count, 0)
                if count <= 0 { return (received, true) }
                received += buffer[..<count]
            }
            return (received, false)
        }
    }

    /// Reads one HTTP response (head and a `Content-Length` body), waiting up to `seconds`.
    func readResponse(seconds: Double = 10) async -> (status: Int, text: String)? {
        let socket = socket
        return await onThread {
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            let deadline = Date(timeIntervalSinceNow: seconds)
            while Date() < deadline {
                if let response = Self.completeResponse(received) { return response }
                var entry = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
                guard poll(&entry, 1, 100) > 0 else { continue }
                let count = recv(socket, &buffer, buffer.count, 0)
                if count <= 0 { break }
                received += buffer[..<count]
            }
            return Self.completeResponse(received) ?? Self.statusOnly(received)
        }
    }

    private static func completeResponse(_ bytes: [UInt8]) -> (status: Int, text: String)? {
        guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)), let status = statusOnly(bytes)?.status else { return nil }
        let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).lowercased()
        let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        guard bytes.count >= end.upperBound + length else { return nil }
        return (status, String(decoding: bytes, as: UTF8.self))
    }

    private static func statusOnly(_ bytes: [UInt8]) -> (status: Int, text: String)? {
        let text = String(decoding: bytes, as: UTF8.self)
        let parts = text.prefix { $0 != "\r" }.split(separator: " ")
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]) else { return nil }
        return (status, text)
    }

    /// Ends the connection in both directions (the descriptor is released on deinit).
    func close() { shutdown(socket, Int32(SHUT_RDWR)) }

    deinit { Glibc.close(socket) }
}

/// Runs blocking work on a dedicated thread and awaits its result.
func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// Runs blocking work on a dedicated thread and awaits its result.
func onThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: work()) }.start()
    }
}
