import Foundation

/// Reads one HTTP/1.1 response from the bytes of a connection, however they are split: the
/// head (informational 1xx heads are skipped), then the body framed by `Content-Length`,
/// chunked transfer coding or the end of the connection.
///
/// Every limit is checked before memory grows: a head larger than `maxHeadBytes`, a chunk-size
/// or trailer line longer than 4 KiB, or a malformed head or chunk throws `Failure`.
struct HTTPResponseParser {
    /// What a piece of input completed.
    enum Event: Equatable {
        /// The status and the header fields (lowercased names; repeated fields joined with ", ").
        case head(status: Int, headers: [String: String])
        /// Body bytes, de-chunked.
        case body(Data)
        /// The response is complete.
        case end
    }

    /// Input that is not an HTTP/1.1 response.
    struct Failure: Error, Equatable, CustomStringConvertible {
        var description: String
    }

    private enum Framing {
        case none
        case length(Int)
        case chunked
        case untilClose
    }

    private enum State {
        case head
        case fixedBody(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case untilClose
        case done
    }

    private static let maxLineBytes = 4_096

    private let isHeadRequest: Bool
    private let maxHeadBytes: Int
    private var state = State.head
    private var line: [UInt8] = []
    private var headLines: [[UInt8]] = []
    private var headBytes = 0
    private var keepAlive = false

    /// Whether any byte of the response arrived.
    private(set) var hasStarted = false

    /// Creates a parser for the response to a request with `method`.
    init(method: String, maxHeadBytes: Int = 64 << 10) {
        isHeadRequest = method.uppercased() == "HEAD"
        self.maxHeadBytes = maxHeadBytes
    }

    /// Whether the response is complete.
    var isComplete: Bool {
        if case .done = state { return true }
        return false
    }

    /// Whether the connection may carry another request once the response is complete.
    var connectionReusable: Bool { isComplete && keepAlive }

    /// Parses the next bytes. Bytes after the end of the response are an error: a server
    /// must not send them before the next request.
    mutating func push(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> [Event] {
        guard !bytes.isEmpty else { return [] }
        hasStarted = true
        var events: [Event] = []
        var body = Data()
        var index = 0
        let count = bytes.count
        while index < count {
            switch state {
            case .head:
                let byte = bytes[index]
                index += 1
                headBytes += 1
                guard headBytes <= maxHeadBytes else { throw Failure(description: "response head larger than \(maxHeadBytes) bytes") }
                if byte == UInt8(ascii: "\n") {
                    if line.last == UInt8(ascii: "\r") { line.removeLast() }
                    if line.isEmpty, !headLines.isEmpty {
                        if let event = try finishHead() { events.append(event) }
                        if case .done = state, index < count { throw Failure(description: "bytes after a response without a body") }
                    } else if !line.isEmpty {
                        headLines.append(line)
                    }
                    line.removeAll(keepingCapacity: true)
                } else {
                    line.append(byte)
                }
            case .fixedBody(let remaining):
                let taken = min(remaining, count - index)
                body.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index..<index + taken]))
                index += taken
                if remaining == taken {
                    state = .done
                    if index < count { throw Failure(description: "bytes after the end of the response") }
                } else {
                    state = .fixedBody(remaining: remaining - taken)
                }
            case .chunkSize:
                if let completed = try takeLine(bytes, &index) {
                    let size = try Self.chunkSize(completed)
                    state = size == 0 ? .trailers : .chunkData(remaining: size)
                }
            case .chunkData(let remaining):
                let taken = min(remaining, count - index)
                body.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index..<index + taken]))
                index += taken
                state = remaining == taken ? .chunkDataEnd : .chunkData(remaining: remaining - taken)
            case .chunkDataEnd:
                if let completed = try takeLine(bytes, &index) {
                    guard completed.isEmpty else { throw Failure(description: "chunk longer than its size") }
                    state = .chunkSize
                }
            case .trailers:
                if let completed = try takeLine(bytes, &index), completed.isEmpty {
                    state = .done
                    if index < count { throw Failure(description: "bytes after the end of the response") }
                }
            case .untilClose:
                body.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index...]))
                index = count
            case .done:
                throw Failure(description: "bytes after the end of the response")
            }
        }
        if !body.isEmpty { events.append(.body(body)) }
        if case .done = state { events.append(.end) }
        return events
    }

    /// The connection closed: completes a body that runs until the close, or throws when the
    /// response was cut short.
    mutating func connectionClosed() throws(Failure) -> [Event] {
        switch state {
        case .untilClose:
            state = .done
            keepAlive = false
            return [.end]
        case .done:
            return []
        default:
            throw Failure(description: hasStarted ? "the connection closed in the middle of the response" : "the server closed the connection without a response")
        }
    }

    /// One CRLF- (or LF-) terminated line, once complete.
    private mutating func takeLine(_ bytes: UnsafeRawBufferPointer, _ index: inout Int) throws(Failure) -> [UInt8]? {
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "\n") {
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                defer { line.removeAll(keepingCapacity: true) }
                return line
            }
            guard line.count < Self.maxLineBytes else { throw Failure(description: "chunk line longer than \(Self.maxLineBytes) bytes") }
            line.append(byte)
        }
        return nil
    }

    private static func chunkSize(_ line: [UInt8]) throws(Failure) -> Int {
        // Extensions (";name=value") are ignored.
        let digits = line.prefix { $0 != UInt8(ascii: ";") }.drop { $0 == UInt8(ascii: " ") }
        let trimmed = digits.reversed().drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }.reversed()
        guard !trimmed.isEmpty, trimmed.count <= 15 else { throw Failure(description: "invalid chunk size") }
        var size = 0
        for byte in trimmed {
            guard let digit = hexValue(byte) else { throw Failure(description: "invalid chunk size") }
            size = size * 16 + digit
        }
        return size
    }

    private static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A")) + 10
        default: nil
        }
    }

    /// Interprets the head just completed; `nil` for an informational head (the next follows).
    private mutating func finishHead() throws(Failure) -> Event? {
        defer {
            headLines.removeAll()
            headBytes = 0
        }
        let statusLine = String(decoding: headLines[0], as: UTF8.self)
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, let status = Int(parts[1]), (100...599).contains(status) else {
            throw Failure(description: "invalid status line")
        }
        var headers: [String: String] = [:]
        for fieldLine in headLines.dropFirst() {
            guard let colon = fieldLine.firstIndex(of: UInt8(ascii: ":")), colon > 0,
                  fieldLine[0] != UInt8(ascii: " "), fieldLine[0] != UInt8(ascii: "\t"),
                  fieldLine[colon - 1] != UInt8(ascii: " ") else {
                throw Failure(description: "invalid header line")
            }
            let name = String(decoding: fieldLine[..<colon], as: UTF8.self).lowercased()
            let value = String(decoding: Self.trimmingWhitespace(fieldLine[(colon + 1)...]), as: UTF8.self)
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        }
        if status < 200 {
            guard status != 101 else { throw Failure(description: "unexpected protocol switch") }
            return nil
        }
        let connection = headers["connection"]?.lowercased() ?? ""
        keepAlive = parts[0] == "HTTP/1.1" ? !connection.contains("close") : connection.contains("keep-alive")
        switch try framing(status: status, headers: headers) {
        case .none: state = .done
        case .length(let length): state = length == 0 ? .done : .fixedBody(remaining: length)
        case .chunked: state = .chunkSize
        case .untilClose:
            state = .untilClose
            keepAlive = false
        }
        return .head(status: status, headers: headers)
    }

    /// `bytes` without the spaces and tabs around it (Foundation's trimming costs far more).
    private static func trimmingWhitespace(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else { return [] }
        return bytes[first...last]
    }

    private func framing(status: Int, headers: [String: String]) throws(Failure) -> Framing {
        if isHeadRequest || status == 204 || status == 304 { return .none }
        if let coding = headers["transfer-encoding"] {
            let last = coding.split(separator: ",").last.map { String(decoding: Self.trimmingWhitespace(Array($0.utf8)[...]), as: UTF8.self) }
            return last?.lowercased() == "chunked" ? .chunked : .untilClose
        }
        if let lengthText = headers["content-length"] {
            // Repeated fields arrive joined; they must agree.
            let values = Set(lengthText.split(separator: ",").map { String(decoding: Self.trimmingWhitespace(Array($0.utf8)[...]), as: UTF8.self) })
            guard values.count == 1, let text = values.first, !text.isEmpty, text.count <= 15,
                  text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), let length = Int(text), length >= 0 else {
                throw Failure(description: "invalid Content-Length")
            }
            return .length(length)
        }
        return .untilClose
    }
}
