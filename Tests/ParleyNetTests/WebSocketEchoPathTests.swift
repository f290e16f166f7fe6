import Foundation
import ParleyNet
import Testing

/// The per-message path (receive, deliver, send, write) under volume, and what it leaves behind.
@Suite("WebSocket echo path")
struct WebSocketEchoPathTests {
    /// A weak reference the test can hand to a handler.
    final class WeakBox: @unchecked Sendable {
        // `@unchecked Sendable`: written once by the handler before the test reads it through
        // `Guarded`, which orders the accesses.
        weak var connection: WebSocketConnection?
    }

    @Test func echoesManyMessagesOfMixedSizesInOrder() async throws {
        // Both queues may hold the whole burst: this test is about order, not backpressure.
        var configuration = HTTPServer.Configuration()
        configuration.maxOutgoingQueueBytes = 64 << 20
        try await withServer(configuration, router: WebSocketTests.echoRouter()) { server in
            let connection = try await WebSocketClient.connect(to: WebSocketTests.url(server), maxOutgoingQueueBytes: 64 << 20)
            // Sizes around the frame-length encodings, the write slice and lws' rx buffer.
            let sizes = [0, 1, 125, 126, 1024, 16 << 10, 65_535, 65_536, 65_537, 200_000]
            var sent: [WebSocketMessage] = []
            for index in 0..<400 {
                let size = sizes[index % sizes.count]
                let message: WebSocketMessage = index % 3 == 0
                    ? .text(String(repeating: Character(UnicodeScalar(UInt8(65 + index % 26))), count: size))
                    : .binary(Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }))
                sent.append(message)
            }
            // Everything is queued before reading, so the server receives and echoes in bursts.
            for message in sent { try connection.send(message) }
            let messages = connection.messages
            let expectedCount = sent.count
            let received = try await withDeadline(60) {
                var iterator = messages.makeAsyncIterator()
                var received: [WebSocketMessage] = []
                while received.count < expectedCount, let message = await iterator.next() { received.append(message) }
                return received
            }
            #expect(received.count == sent.count)
            #expect(received == sent)
        }
    }

    @Test func echoesUnfragmentedFramesOf16KiBAnd1MiB() async throws {
        try await withServer(router: WebSocketTests.echoRouter()) { server in
            let socket = try RawSocket(port: server.port)
            try socket.sendBlocking(Data((
                "GET /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8))
            let head = try await socket.receive(until: "\r\n\r\n")
            #expect(String(decoding: head, as: UTF8.self).hasPrefix("HTTP/1.1 101"))
            var reader = FrameReader(socket: socket)
            for size in [16 << 10, 1 << 20] {
                let payload = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ size) })
                // One frame with FIN set: lws hands it over in pieces no bigger than its rx buffer.
                try socket.sendBlocking(Self.maskedBinaryFrame(payload))
                let echoed = try await reader.message()
                // Compared outside #expect: on a mismatch it would diff a megabyte byte by byte.
                let intact = echoed == payload
                #expect(intact, "the echo of \(size) bytes differs (\(echoed.count) bytes came back)")
            }
        }
    }

    @Test func aHandlerRelaysABurstToAnotherConnectionInOrder() async throws {
        // Each handler runs inside its connection's receive callback when a message arrives;
        // what it sends to another connection waits for that one's own write.
        let listeners = Guarded<[WebSocketConnection]>([])
        var router = Router()
        router.webSocket("/relay", WebSocketRoute(
            decide: { _ in .accept(subprotocol: nil) },
            onConnection: { connection, request in
                if request.query["role"] == "listener" { listeners.withLock { $0.append(connection) } }
                try? connection.send(.text("ready"))
                for await message in connection.messages {
                    for listener in listeners.withLock({ $0 }) { try? listener.send(message) }
                }
            }))
        try await withServer(router: router) { server in
            let listener = try await WebSocketClient.connect(to: WebSocketTests.url(server, "/relay?role=listener"))
            let speaker = try await WebSocketClient.connect(to: WebSocketTests.url(server, "/relay"))
            let listenerMessages = listener.messages, speakerMessages = speaker.messages
            try await withDeadline(30) {
                var listenerIterator = listenerMessages.makeAsyncIterator(), speakerIterator = speakerMessages.makeAsyncIterator()
                #expect(await listenerIterator.next() == .text("ready"))
                #expect(await speakerIterator.next() == .text("ready"))
            }
            let sent: [WebSocketMessage] = (0..<300).map { index in
                index % 2 == 0 ? .text("message \(index)") : .binary(Data(repeating: UInt8(truncatingIfNeeded: index), count: 1 + index * 37))
            }
            for message in sent { try speaker.send(message) }
            let received = try await withDeadline(30) {
                var iterator = listenerMessages.makeAsyncIterator()
                var received: [WebSocketMessage] = []
                while received.count < 300, let message = await iterator.next() { received.append(message) }
                return received
            }
            #expect(received == sent)
        }
    }

    @Test func aClosedConnectionIsReleasedOnBothSides() async throws {
        let serverSide = WeakBox()
        let handed = Guarded(false)
        var router = Router()
        router.webSocket("/echo", WebSocketRoute(
            decide: { _ in .accept(subprotocol: nil) },
            onConnection: { connection, _ in
                handed.withLock { handed in
                    serverSide.connection = connection
                    handed = true
                }
                for await message in connection.messages { try? connection.send(message) }
            }))
        try await withServer(router: router) { server in
            let clientSide = WeakBox()
            do {
                let connection = try await WebSocketClient.connect(to: WebSocketTests.url(server))
                clientSide.connection = connection
                var iterator = connection.messages.makeAsyncIterator()
                try connection.send(.binary(Data(count: 16 << 10)))
                #expect(await iterator.next() == .binary(Data(count: 16 << 10)))
                connection.close()
                await connection.waitUntilClosed()
            }
            #expect(handed.withLock { $0 })
            // Nothing keeps a closed connection alive: lws lets go of it right after the close.
            try await withDeadline(30) {
                while handed.withLock({ _ in serverSide.connection != nil }) || clientSide.connection != nil {
                    try Task.checkCancellation()
                    await Task.yield()
                }
            }
        }
    }

    @Test func aCancelledConsumerOtherThanTheHandlerStopsWaiting() async throws {
        var router = Router()
        router.webSocket("/child", WebSocketRoute(
            decide: { _ in .accept(subprotocol: nil) },
            onConnection: { connection, _ in
                let (gotFirst, firstArrived) = AsyncStream<Void>.makeStream()
                let secondWasNil = await withTaskGroup(of: Bool?.self) { group in
                    // A child task of the handler reads; the handler cancels it while it waits.
                    group.addTask {
                        var iterator = connection.messages.makeAsyncIterator()
                        _ = await iterator.next()
                        firstArrived.yield()
                        return await iterator.next() == nil
                    }
                    for await _ in gotFirst { break }
                    group.cancelAll()
                    return await group.next() ?? nil
                }
                try? connection.send(.text("second was nil: \(secondWasNil ?? false)"))
            }))
        try await withServer(router: router) { server in
            let connection = try await WebSocketClient.connect(to: WebSocketTests.url(server, "/child"))
            try connection.send(.text("first"))
            let messages = connection.messages
            let reply = try await withDeadline(30) {
                var iterator = messages.makeAsyncIterator()
                return await iterator.next()
            }
            #expect(reply == .text("second was nil: true"))
        }
    }

    /// A client frame (masked, as RFC 6455 requires) carrying `payload` with FIN set.
    static func maskedBinaryFrame(_ payload: Data) -> Data {
        var frame = Data([0x82])
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            frame.append(0x80 | 126)
            frame.append(contentsOf: [UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)])
        } else {
            frame.append(0x80 | 127)
            frame.append(contentsOf: (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) })
        }
        let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        frame.append(contentsOf: mask)
        frame.append(contentsOf: payload.enumerated().map { $0.element ^ mask[$0.offset % 4] })
        return frame
    }

}

/// Reads server frames (unmasked) from a raw socket.
struct FrameReader {
    let socket: RawSocket
    private var pending = Data()

    init(socket: RawSocket) {
        self.socket = socket
    }

    /// One complete message, its fragments joined.
    mutating func message() async throws -> Data {
        var message = Data()
        while true {
            let head = try await read(2)
            var length = Int(head[head.startIndex + 1] & 0x7F)
            if length == 126 {
                length = try await read(2).reduce(0) { $0 << 8 | Int($1) }
            } else if length == 127 {
                length = try await read(8).reduce(0) { $0 << 8 | Int($1) }
            }
            message.append(try await read(length))
            if head[head.startIndex] & 0x80 != 0 { return message }
        }
    }

    private mutating func read(_ count: Int) async throws -> Data {
        while pending.count < count {
            let chunk = try await socket.receiveSome()
            guard !chunk.isEmpty else { throw RawSocketError.failed("closed mid-frame") }
            pending.append(chunk)
        }
        let bytes = Data(pending.prefix(count))
        pending = Data(pending.dropFirst(count))
        return bytes
    }
}
