import Foundation
import ParleyCore

#if canImport(Glibc)
import Glibc
#endif

/// A fake OpenAI-compatible upstream on a raw loopback TCP socket that misbehaves on demand:
/// it answers `/chat/completions` (SSE), `/audio/transcriptions` (JSON) and `/audio/speech`
/// (raw PCM) healthily, or with the configured `Fault` — down to the byte: stalls, cut
/// connections, garbage, trickles. Raw sockets, one thread per connection, so a fault is
/// exactly what the bytes on the wire say.
///
/// `@unchecked Sendable`: `fault`, `requestCount`, `openConnections`, `authorizations`,
/// `lastChatBody`, `listener` and `stopped` are guarded by `lock`.
final class FaultyUpstream: @unchecked Sendable {
    /// What the upstream does with the next requests.
    enum Fault: String, Sendable, CaseIterable, CustomStringConvertible {
        case healthy
        /// Nobody listens on the port.
        case connectionRefused = "connection refused"
        case unauthorized = "401"
        case rateLimited = "429"
        case serverError = "500"
        /// Reads the request, then sends nothing until the client gives up.
        case stallBeforeFirstByte = "stall before first byte"
        /// Sends the head and the first part of the body, then nothing.
        case stallMidStream = "stall mid-stream"
        /// Sends the head and the first part of the body, then closes the connection.
        case disconnectMidStream = "disconnect mid-stream"
        /// Answers 200 with a body that is not what the API promises.
        case malformedBody = "malformed body"
        /// Sends the healthy response one byte every `trickleInterval`.
        case slowTrickle = "very slow trickle"
        /// Sends the head and the first output at once, then the rest one byte every `trickleInterval`.
        case trickleAfterFirstOutput = "trickle after first output"

        var description: String { rawValue }
    }

    /// The pause between bytes of a trickle, in seconds.
    static let trickleInterval: TimeInterval = 0.15
    /// The words the healthy chat completion streams.
    static let reply = "Hello from the fake upstream."
    /// The transcript the healthy transcription returns.
    static let transcript = "hello there"

    private let lock = NSLock()
    private var fault: Fault = .healthy
    private var listener: Int32 = -1
    private var stopped = false
    private var requestCount = 0
    private var openConnections = 0
    private var authorizations: Set<String> = []
    private var lastChatBody = Data()
    /// The bound port (kept while refusing, so listening again reuses it).
    let port: Int

    /// Starts listening on a free loopback port.
    init() throws {
        let socket = try Self.listen(port: 0)
        listener = socket
        port = Self.boundPort(socket)
        startAcceptLoop(socket)
    }

    /// The API root to configure providers with.
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/v1")! }

    /// Switches to `fault` for the following connections (`connectionRefused` closes the listener).
    func set(_ newFault: Fault) throws {
        let (socketToClose, mustListen): (Int32, Bool) = lock.withLock {
            fault = newFault
            if newFault == .connectionRefused, listener >= 0 {
                defer { listener = -1 }
                return (listener, false)
            }
            return (-1, newFault != .connectionRefused && listener < 0)
        }
        if socketToClose >= 0 { close(socketToClose) }
        if mustListen {
            let socket = try Self.listen(port: port)
            lock.withLock { listener = socket }
            startAcceptLoop(socket)
        }
    }

    /// Requests received so far.
    var requests: Int { lock.withLock { requestCount } }
    /// Connections the upstream still holds open (a client that gave up has closed its end).
    var connections: Int { lock.withLock { openConnections } }
    /// The body of the latest chat completion request.
    var latestChatRequest: JSONValue? { lock.withLock { try? JSONDecoder().decode(JSONValue.self, from: lastChatBody) } }

    /// The distinct `Authorization` headers received.
    var receivedAuthorizations: Set<String> { lock.withLock { authorizations } }

    /// Stops listening and ends every connection.
    func stop() {
        let socket: Int32 = lock.withLock {
            stopped = true
            defer { listener = -1 }
            return listener
        }
        if socket >= 0 { close(socket) }
    }

    // MARK: Sockets

    private static func listen(port: Int) throws -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw UpstreamError.socket("socket", errno) }
        var yes: Int32 = 1
        setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(socket, 64) == 0 else {
            let code = errno
            close(socket)
            throw UpstreamError.socket("bind/listen", code)
        }
        return socket
    }

    private static func boundPort(_ socket: Int32) -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private func startAcceptLoop(_ socket: Int32) {
        let thread = Thread { [self] in
            while true {
                // poll so that closing the listener (refusing, stopping) ends the loop.
                var entry = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
                let ready = poll(&entry, 1, 100)
                let current = lock.withLock { listener == socket && !stopped }
                guard current else { return }
                guard ready > 0 else { continue }
                let client = accept(socket, nil, nil)
                guard client >= 0 else { continue }
                lock.withLock { openConnections += 1 }
                Thread { [self] in
                    serve(client)
                    close(client)
                    lock.withLock { openConnections -= 1 }
                }.start()
            }
        }
        thread.start()
    }

    // MARK: Serving one connection

    private func serve(_ client: Int32) {
        guard let request = readRequest(client) else { return }
        let kind = Kind(path: request.path)
        let fault = lock.withLock {
            requestCount += 1
            authorizations.insert(request.authorization ?? "")
            if case .chat = kind { lastChatBody = request.body }
            return self.fault
        }
        switch fault {
        case .healthy, .connectionRefused:
            send(client, kind.healthyResponse())
        case .unauthorized:
            // Like real services, the message quotes the key it got: the provider must redact it.
            let key = request.authorization.map { String($0.dropFirst("Bearer ".count)) } ?? ""
            send(client, Self.errorResponse(status: 401, reason: "Unauthorized", type: "invalid_request_error", code: "invalid_api_key",
                message: "Incorrect API key provided: \(key)."))
        case .rateLimited:
            send(client, Self.errorResponse(status: 429, reason: "Too Many Requests", type: "requests", code: "rate_limit_exceeded",
                message: "Rate limit reached.", extraHeaders: "Retry-After: 0.05\r\n"))
        case .serverError:
            send(client, Self.errorResponse(status: 500, reason: "Internal Server Error", type: "server_error", code: nil,
                message: "The server had an error while processing your request."))
        case .stallBeforeFirstByte:
            waitForPeerToClose(client)
        case .stallMidStream:
            send(client, kind.firstPart())
            waitForPeerToClose(client)
        case .disconnectMidStream:
            send(client, kind.firstPart())
            shutdown(client, Int32(SHUT_RDWR))
        case .malformedBody:
            send(client, kind.malformedResponse())
        case .slowTrickle:
            trickle(client, kind.healthyResponse()[...])
        case .trickleAfterFirstOutput:
            let first = kind.firstPart()
            send(client, first)
            trickle(client, kind.healthyResponse()[first.count...])
        }
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    /// Sends `bytes` one every `trickleInterval`, until done, the client leaves or the upstream stops.
    private func trickle(_ client: Int32, _ bytes: ArraySlice<UInt8>) {
        for byte in bytes {
            guard send(client, [byte]), !isStopped else { return }
            Thread.sleep(forTimeInterval: Self.trickleInterval)
        }
    }

    private struct Request {
        var path: String
        var authorization: String?
        var body: Data
    }

    /// Reads the request head and its `Content-Length` body.
    private func readRequest(_ client: Int32) -> Request? {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        var bodyLength = 0
        while true {
            if headEnd == nil, let range = buffer.firstRange(of: separator) {
                headEnd = range.upperBound
                let head = String(decoding: buffer[..<range.lowerBound], as: UTF8.self)
                bodyLength = Self.header("content-length", in: head).flatMap { Int($0) } ?? 0
            }
            if let headEnd, buffer.count >= headEnd + bodyLength {
                let head = String(decoding: buffer[..<headEnd], as: UTF8.self)
                let requestLine = head.prefix { $0 != "\r" }.split(separator: " ")
                return Request(
                    path: requestLine.count > 1 ? String(requestLine[1]) : "/", authorization: Self.header("authorization", in: head),
                    body: Data(buffer[headEnd..<(headEnd + bodyLength)])
                )
            }
            let count = recv(client, &chunk, chunk.count, 0)
            guard count > 0 else { return nil }
            buffer += chunk[..<count]
        }
    }

    private static func header(_ name: String, in head: String) -> String? {
        for line in head.split(separator: "\r\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name { return parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }

    /// Holds the connection until the client closes it or the upstream stops.
    private func waitForPeerToClose(_ client: Int32) {
        var scratch = [UInt8](repeating: 0, count: 4096)
        while !isStopped {
            var entry = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 50) >= 0 else { return }
            if entry.revents != 0, recv(client, &scratch, scratch.count, 0) <= 0 { return }
        }
    }

    @discardableResult
    private func send(_ client: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    // MARK: Responses

    private static func errorResponse(status: Int, reason: String, type: String, code: String?, message: String, extraHeaders: String = "") -> [UInt8] {
        let body = #"{"error":{"message":"\#(message)","type":"\#(type)","param":null,"code":\#(code.map { "\"\($0)\"" } ?? "null")}}"#
        return head(status: status, reason: reason, contentType: "application/json", extra: extraHeaders + "Content-Length: \(body.utf8.count)\r\n")
            + Array(body.utf8)
    }

    private static func head(status: Int = 200, reason: String = "OK", contentType: String, extra: String) -> [UInt8] {
        Array("HTTP/1.1 \(status) \(reason)\r\nContent-Type: \(contentType)\r\nConnection: close\r\n\(extra)\r\n".utf8)
    }

    private static func chunk(_ bytes: [UInt8]) -> [UInt8] {
        Array(String(bytes.count, radix: 16).utf8) + Array("\r\n".utf8) + bytes + Array("\r\n".utf8)
    }

    private static let lastChunk = Array("0\r\n\r\n".utf8)

    /// The API a request path belongs to.
    private enum Kind {
        case chat, transcription, speech

        init(path: String) {
            if path.hasSuffix("/audio/transcriptions") {
                self = .transcription
            } else if path.hasSuffix("/audio/speech") {
                self = .speech
            } else {
                self = .chat
            }
        }

        /// The SSE events of a healthy chat completion stream.
        private var chatEvents: [String] {
            var deltas = [#"{"role":"assistant","content":""}"#]
            for (index, word) in FaultyUpstream.reply.split(separator: " ").enumerated() {
                deltas.append(#"{"content":"\#(index == 0 ? "" : " ")\#(word)"}"#)
            }
            var events = deltas.map { #"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":\#($0),"finish_reason":null}]}"# + "\n\n" }
            events.append(#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":6,"total_tokens":18}}"# + "\n\n")
            events.append("data: [DONE]\n\n")
            return events
        }

        /// 0.4 s of a 440 Hz tone, 24 kHz pcm16 little-endian, in 100 ms pieces.
        private var speechPieces: [[UInt8]] {
            let samples = (0..<9_600).map { Int16(8_000 * sin(Double($0) * 2 * .pi * 440 / 24_000)) }
            let bytes = samples.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] }
            return stride(from: 0, to: bytes.count, by: 4_800).map { Array(bytes[$0..<min($0 + 4_800, bytes.count)]) }
        }

        /// The transcription JSON, padded with whitespace so that trickling it takes 30 s: far
        /// longer than any deadline, however late a loaded machine runs the deadline's timer.
        private var transcriptionBody: [UInt8] {
            Array(#"{"text":"\#(FaultyUpstream.transcript)""#.utf8) + Array(repeating: UInt8(ascii: " "), count: 200) + Array("}".utf8)
        }

        func healthyResponse() -> [UInt8] {
            switch self {
            case .chat:
                head(contentType: "text/event-stream", extra: "Transfer-Encoding: chunked\r\n")
                    + chatEvents.flatMap { chunk(Array($0.utf8)) } + lastChunk
            case .transcription:
                head(contentType: "application/json", extra: "Content-Length: \(transcriptionBody.count)\r\n") + transcriptionBody
            case .speech:
                head(contentType: "audio/pcm", extra: "Transfer-Encoding: chunked\r\n") + speechPieces.flatMap(chunk) + lastChunk
            }
        }

        /// The head and the start of the body, as a response cut short would have them.
        func firstPart() -> [UInt8] {
            switch self {
            case .chat:
                head(contentType: "text/event-stream", extra: "Transfer-Encoding: chunked\r\n")
                    + chatEvents.prefix(2).flatMap { chunk(Array($0.utf8)) }
            case .transcription:
                head(contentType: "application/json", extra: "Content-Length: \(transcriptionBody.count)\r\n")
                    + Array(transcriptionBody.prefix(8))
            case .speech:
                head(contentType: "audio/pcm", extra: "Transfer-Encoding: chunked\r\n") + chunk(speechPieces[0])
            }
        }

        /// A complete 200 response whose body breaks the API's promise.
        func malformedResponse() -> [UInt8] {
            let body: [UInt8]
            let contentType: String
            switch self {
            case .chat:
                contentType = "text/event-stream"
                body = Array(#"data: {"choices":[{"delta":{"content":5}"# .utf8) + Array("\n\ndata: <html>gateway</html>\n\n".utf8)
            case .transcription:
                contentType = "application/json"
                body = Array(#"{"txet":"#.utf8)
            case .speech:
                contentType = "text/html"
                body = Array("<html><body>502 Bad Gateway</body></html>".utf8)
            }
            return head(contentType: contentType, extra: "Content-Length: \(body.count)\r\n") + body
        }
    }
}

/// A socket call the fake upstream needs failed.
struct UpstreamError: Error, CustomStringConvertible {
    var call: String
    var code: Int32

    static func socket(_ call: String, _ code: Int32) -> UpstreamError { UpstreamError(call: call, code: code) }

    var description: String { "\(call) failed: \(String(cString: strerror(code)))" }
}
