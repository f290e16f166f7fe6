import Foundation
import ParleyTesting
#if canImport(Glibc)
import Glibc
#endif

/// A TCP client socket for speaking raw bytes to the server under test. The blocking system
/// calls run on a dispatch queue so they never occupy the cooperative thread pool.
///
/// It connects on its first send or read, in the same blocking call: when the whole test suite
/// keeps the cooperative pool busy, the test's task may wait seconds between two awaits, and a
/// connection made early would sit idle long enough for the server to cut it off (lws gives a
/// new connection 5 s to send its request).
final class RawSocket: Sendable {
    let descriptor: Int32
    private let port: Int
    private let connected = Guarded(false)

    /// Prepares a connection to 127.0.0.1:`port`, with `timeout` seconds for every read and
    /// write (longer where tests run slower, see `TestDeadline`).
    init(port: Int, timeout: Int = 30) throws {
        let timeout = Int(Double(timeout) * TestDeadline.scale)
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw RawSocketError.failed("socket") }
        self.port = port
        var time = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Connects unless already connected.
    private func connectIfNeeded() throws {
        try connected.withLock { connected in
            guard !connected else { return }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard result == 0 else { throw RawSocketError.failed("connect") }
            connected = true
        }
    }

    deinit {
        close(descriptor)
    }

    /// Sets the kernel receive buffer size (call before the first send or read to make a slow
    /// reader).
    func setReceiveBuffer(_ bytes: Int32) {
        var size = bytes
        setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Sends all of `data`.
    func sendBlocking(_ data: Data) throws {
        try connectIfNeeded()
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let sent = Glibc.send(descriptor, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                guard sent > 0 else { throw RawSocketError.failed("send") }
                offset += sent
            }
        }
    }

    /// Sends all of `data`.
    func send(_ data: Data) async throws {
        try await offPool { try self.sendBlocking(data) }
    }

    /// Sends `text` as UTF-8.
    func send(_ text: String) async throws {
        try await send(Data(text.utf8))
    }

    /// Reads what is available (blocking until at least one byte or EOF); empty at EOF.
    func receiveSomeBlocking(max: Int = 65536) throws -> Data {
        try connectIfNeeded()
        var buffer = [UInt8](repeating: 0, count: max)
        let count = recv(descriptor, &buffer, max, 0)
        guard count >= 0 else { throw RawSocketError.failed("recv") }
        return Data(buffer[0..<count])
    }

    /// Reads what is available (at least one byte); empty at EOF.
    func receiveSome(max: Int = 65536) async throws -> Data {
        try await offPool { try self.receiveSomeBlocking(max: max) }
    }

    /// Reads until the peer closes the connection.
    func receiveUntilClosed() async throws -> Data {
        try await offPool { try self.receiveUntilClosedBlocking() }
    }

    /// Reads until `terminator` has been seen; returns everything read.
    func receive(until terminator: String) async throws -> Data {
        try await offPool { try self.receiveBlocking(until: terminator) }
    }

    /// Reads one complete HTTP/1.1 response with a Content-Length body.
    func receiveResponse() async throws -> RawResponse {
        try await offPool { try self.receiveResponseBlocking() }
    }

    private func receiveUntilClosedBlocking() throws -> Data {
        var all = Data()
        while true {
            let chunk = try receiveSomeBlocking()
            if chunk.isEmpty { return all }
            all.append(chunk)
        }
    }

    private func receiveBlocking(until terminator: String) throws -> Data {
        var all = Data()
        let marker = Data(terminator.utf8)
        while all.range(of: marker) == nil {
            let chunk = try receiveSomeBlocking()
            if chunk.isEmpty { break }
            all.append(chunk)
        }
        return all
    }

    private func receiveResponseBlocking() throws -> RawResponse {
        var all = try receiveBlocking(until: "\r\n\r\n")
        guard let headEnd = all.range(of: Data("\r\n\r\n".utf8)) else { throw RawSocketError.failed("no response head") }
        let head = String(decoding: all[..<headEnd.lowerBound], as: UTF8.self)
        let response = RawResponse(head: head, body: Data())
        let length = Int(response.header("content-length") ?? "0") ?? 0
        while all.count - headEnd.upperBound < length {
            let chunk = try receiveSomeBlocking()
            if chunk.isEmpty { break }
            all.append(chunk)
        }
        return RawResponse(head: head, body: Data(all[headEnd.upperBound...].prefix(length)))
    }
}

/// A parsed raw HTTP response.
struct RawResponse {
    let head: String
    let body: Data

    /// The status code from the status line.
    var status: Int {
        let parts = head.split(separator: " ", maxSplits: 2)
        return parts.count > 1 ? Int(parts[1]) ?? 0 : 0
    }

    /// A header value by case-insensitive name.
    func header(_ name: String) -> String? {
        for line in head.components(separatedBy: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            if line[..<colon].lowercased() == name.lowercased() {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    /// The body as text.
    var text: String { String(decoding: body, as: UTF8.self) }
}

enum RawSocketError: Error {
    case failed(String)
}

/// Runs blocking work on a dispatch queue and awaits its result.
func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(with: Result { try work() })
        }
    }
}
