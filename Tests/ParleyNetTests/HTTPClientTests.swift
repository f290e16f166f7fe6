import Foundation
import Testing
@testable import ParleyNet
import ParleyTesting

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A one-shot event the raw server thread fires and a test awaits.
final class HTTPClientTestSignal: @unchecked Sendable {  // `lock` guards `fired` and `waiters`.
    private let lock = NSLock()
    private var fired = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func fire() {
        let waiting = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            fired = true
            defer { waiters = [] }
            return waiters
        }
        waiting.forEach { $0.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let ready = lock.withLock { () -> Bool in
                if fired { return true }
                waiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Blocks the calling (non-async) thread until fired or `seconds` pass.
    func block(seconds: Double) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if lock.withLock({ fired }) { return true }
            usleep(1_000)
        }
        return false
    }
}

/// A bare TCP server on a loopback port that plays a scripted HTTP exchange byte for byte,
/// so tests can produce what a well-behaved server never would (a body cut off mid-chunk).
final class RawHTTPServer: Sendable {
    let port: Int
    private let listener: Int32

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 8) == 0 else {
            close(listener)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(listener) }

    var url: URL { URL(string: "http://127.0.0.1:\(port)/path")! }

    /// Accepts one connection and runs `script` on it on a background thread.
    func serveOne(_ script: @escaping @Sendable (RawConnection) -> Void) {
        let listener = listener
        Thread.detachNewThread {
            let descriptor = accept(listener, nil, nil)
            guard descriptor >= 0 else { return }
            let connection = RawConnection(descriptor: descriptor)
            script(connection)
            connection.close()
        }
    }
}

/// One accepted connection of `RawHTTPServer`.
final class RawConnection: @unchecked Sendable {  // Used by one server thread only.
    private let descriptor: Int32
    private var closed = false

    init(descriptor: Int32) { self.descriptor = descriptor }

    /// Reads the request head and its `Content-Length` body.
    func readRequest() -> (head: String, body: Data) {
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while received.range(of: Data("\r\n\r\n".utf8)) == nil {
            let count = read(descriptor, &buffer, buffer.count)
            guard count > 0 else { return ("", Data()) }
            received.append(contentsOf: buffer[0..<count])
        }
        let split = received.range(of: Data("\r\n\r\n".utf8))!
        let head = String(decoding: received[..<split.lowerBound], as: UTF8.self)
        var body = Data(received[split.upperBound...])
        let length = head.split(separator: "\r\n")
            .first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
        while body.count < length {
            let count = read(descriptor, &buffer, buffer.count)
            guard count > 0 else { break }
            body.append(contentsOf: buffer[0..<count])
        }
        return (head, body)
    }

    func write(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
    }

    /// Waits until the peer closes the connection; `false` after `seconds` without that.
    func waitForPeerClose(seconds: Double) -> Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let end = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 1024)
        while Date() < end {
            guard poll(&poller, 1, 50) >= 0 else { return true }
            if poller.revents != 0 {
                let count = read(descriptor, &buffer, buffer.count)
                if count <= 0 { return true }
            }
        }
        return false
    }

    func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(descriptor)
    }
}

func httpClientTestDeadline<T: Sendable>(_ seconds: Double = 30, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: TestDeadline.seconds(seconds))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw CancellationError() }
        return value
    }
}

func chunk(_ text: String) -> String { String(text.utf8.count, radix: 16) + "\r\n" + text + "\r\n" }

@Suite struct HTTPClientTests {
    @Test func sendsTheRequestAndStreamsTheBodyAsItArrives() async throws {
        let server = try RawHTTPServer()
        let firstPieceSeen = HTTPClientTestSignal()
        let request = RequestBox()
        server.serveOne { connection in
            request.set(connection.readRequest())
            connection.write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
            connection.write(chunk("hello "))
            // The rest is only sent once the client has seen the first piece: the body streams.
            guard firstPieceSeen.block(seconds: 30) else { return }
            connection.write(chunk("world") + "0\r\n\r\n")
        }
        let client = HTTPClient()
        let body = try await httpClientTestDeadline {
            let response = try await client.stream(HTTPClient.Request(
                url: server.url, method: "POST", headers: ["X-Custom": "yes", "Content-Type": "application/json"], body: Data("{}".utf8)
            ))
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "text/event-stream")
            var received = ""
            for try await piece in response.body {
                received += String(decoding: piece, as: UTF8.self)
                if received == "hello " { firstPieceSeen.fire() }
            }
            return received
        }
        #expect(body == "hello world")
        let (head, sentBody) = try #require(request.value)
        #expect(head.hasPrefix("POST /path HTTP/1.1"))
        #expect(head.lowercased().contains("x-custom: yes"))
        #expect(sentBody == Data("{}".utf8))
    }

    @Test func cancellingTheConsumerClosesTheConnection() async throws {
        let server = try RawHTTPServer()
        let closedByClient = HTTPClientTestSignal()
        server.serveOne { connection in
            _ = connection.readRequest()
            connection.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk("first"))
            if connection.waitForPeerClose(seconds: 30) { closedByClient.fire() }
        }
        let client = HTTPClient()
        let gotFirst = HTTPClientTestSignal()
        let consumer = Task {
            let response = try await client.stream(HTTPClient.Request(url: server.url))
            for try await _ in response.body { gotFirst.fire() }
        }
        try await httpClientTestDeadline { await gotFirst.wait() }
        consumer.cancel()
        try await httpClientTestDeadline { await closedByClient.wait() }
    }

    @Test func cancellingBeforeTheHeadArrivesClosesTheConnection() async throws {
        let server = try RawHTTPServer()
        let requestSeen = HTTPClientTestSignal()
        let closedByClient = HTTPClientTestSignal()
        server.serveOne { connection in
            _ = connection.readRequest()
            requestSeen.fire()
            if connection.waitForPeerClose(seconds: 30) { closedByClient.fire() }
        }
        let client = HTTPClient()
        let caller = Task { try await client.stream(HTTPClient.Request(url: server.url)) }
        try await httpClientTestDeadline { await requestSeen.wait() }
        caller.cancel()
        try await httpClientTestDeadline { await closedByClient.wait() }
        await #expect(throws: CancellationError.self) { _ = try await caller.value }
    }

    @Test func aBodyCutOffMidwayIsAConnectionLoss() async throws {
        let server = try RawHTTPServer()
        server.serveOne { connection in
            _ = connection.readRequest()
            connection.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk("partial") + "40\r\nonly part of a chunk")
        }
        let client = HTTPClient()
        let error = try await httpClientTestDeadline { () -> HTTPClientError? in
            let response = try await client.stream(HTTPClient.Request(url: server.url))
            do {
                for try await _ in response.body {}
                return nil
            } catch let error as HTTPClientError {
                return error
            }
        }
        #expect(error?.kind == .connectionLost, "\(String(describing: error)) \(String(describing: error?.underlying))")
    }

    @Test func aRefusedConnectionIsAConnectionFailure() async throws {
        let closed = try ClosedPort()
        let client = HTTPClient()
        await #expect { () async throws -> Void in
            _ = try await client.send(HTTPClient.Request(url: URL(string: "http://127.0.0.1:\(closed.port)/")!))
        } throws: { error in
            (error as? HTTPClientError)?.kind == .connectionFailed
        }
        withExtendedLifetime(closed) {}
    }

    @Test func sendCollectsTheBodyUpToALimit() async throws {
        let server = try RawHTTPServer()
        server.serveOne { connection in
            _ = connection.readRequest()
            connection.write("HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nX-Thing: 1\r\n\r\nnot found")
        }
        let client = HTTPClient()
        let response = try await httpClientTestDeadline { try await client.send(HTTPClient.Request(url: server.url)) }
        #expect(response.status == 404)
        #expect(response.body == Data("not found".utf8))
        #expect(response.headers["x-thing"] == "1")

        let large = try RawHTTPServer()
        large.serveOne { connection in
            _ = connection.readRequest()
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + String(repeating: "x", count: 100))
        }
        await #expect { () async throws -> Void in
            _ = try await client.send(HTTPClient.Request(url: large.url), maxBodyBytes: 10)
        } throws: { error in
            (error as? HTTPClientError)?.kind == .responseTooLarge
        }
    }
}

/// Holds what the server thread read, for the test to check afterwards.
final class RequestBox: @unchecked Sendable {  // `lock` guards `stored`.
    private let lock = NSLock()
    private var stored: (String, Data)?

    func set(_ value: (String, Data)) { lock.withLock { stored = value } }
    var value: (String, Data)? { lock.withLock { stored } }
}
