import Foundation

/// How a response body is delimited on the wire.
enum BodyFraming: Equatable {
    /// `Content-Length: n`.
    case contentLength(Int)
    /// `Transfer-Encoding: chunked`.
    case chunked
    /// Until the connection closes (HTTP/1.0 clients of streamed bodies).
    case untilClose
}

/// Serialises HTTP/1.1 status lines, headers and chunk frames.
enum HTTPResponseHead {
    /// Fields the server sets itself; handler values for these are dropped.
    private static let reservedFields = ["content-length", "transfer-encoding", "connection"]

    /// The status line and header block, ending with the blank line.
    static func serialize(status: Int, headers: HTTPHeaders, framing: BodyFraming, keepAlive: Bool) -> Data {
        var bytes: [UInt8] = []
        append(to: &bytes, status: status, headers: headers, framing: framing, keepAlive: keepAlive)
        return Data(bytes)
    }

    /// The head followed by `body`, behind `lwsPre` bytes of headroom (see `LWSWrite.write(_:frame:payloadRange:mode:)`).
    static func frame(status: Int, headers: HTTPHeaders, framing: BodyFraming, keepAlive: Bool, body: Data?) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(lwsPre + 128 + headers.count * 40 + (body?.count ?? 0))
        bytes.append(contentsOf: repeatElement(0, count: lwsPre))
        append(to: &bytes, status: status, headers: headers, framing: framing, keepAlive: keepAlive)
        if let body { bytes.append(contentsOf: body) }
        return bytes
    }

    private static func append(to bytes: inout [UInt8], status: Int, headers: HTTPHeaders, framing: BodyFraming, keepAlive: Bool) {
        bytes.append(contentsOf: "HTTP/1.1 ".utf8)
        bytes.append(contentsOf: String(status).utf8)
        bytes.append(0x20)
        bytes.append(contentsOf: HTTPStatus.reasonPhrase(status).utf8)
        bytes.append(contentsOf: crlf)
        for (name, value) in headers where !reservedFields.contains(where: { name.caseInsensitiveEquals($0) }) {
            bytes.append(contentsOf: sanitized(name).utf8)
            bytes.append(contentsOf: ": ".utf8)
            bytes.append(contentsOf: sanitized(value).utf8)
            bytes.append(contentsOf: crlf)
        }
        switch framing {
        case .contentLength(let length):
            bytes.append(contentsOf: "Content-Length: ".utf8)
            bytes.append(contentsOf: String(length).utf8)
            bytes.append(contentsOf: crlf)
        case .chunked:
            bytes.append(contentsOf: "Transfer-Encoding: chunked\r\n".utf8)
        case .untilClose:
            break
        }
        if !keepAlive { bytes.append(contentsOf: "Connection: close\r\n".utf8) }
        bytes.append(contentsOf: crlf)
    }

    private static let crlf: [UInt8] = [0x0D, 0x0A]

    /// One chunk of a chunked body: size in hex, CRLF, data, CRLF.
    static func chunk(_ data: Data) -> Data {
        var framed = Data(String(data.count, radix: 16).utf8)
        framed.append(contentsOf: [0x0D, 0x0A])
        framed.append(data)
        framed.append(contentsOf: [0x0D, 0x0A])
        return framed
    }

    /// The zero-length chunk that ends a chunked body.
    static let lastChunk = Data("0\r\n\r\n".utf8)

    /// Removes CR and LF so a value can never split the header block.
    private static func sanitized(_ text: String) -> String {
        // Bytes, not Characters: "\r\n" is a single Character equal to neither.
        guard text.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A }) else { return text }
        var clean = String.UnicodeScalarView()
        clean.append(contentsOf: text.unicodeScalars.filter { $0 != "\r" && $0 != "\n" })
        return String(clean)
    }
}
