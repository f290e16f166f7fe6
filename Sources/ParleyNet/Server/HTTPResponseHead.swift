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
        var text = "HTTP/1.1 \(status) \(HTTPStatus.reasonPhrase(status))\r\n"
        for (name, value) in headers where !reservedFields.contains(where: { name.caseInsensitiveEquals($0) }) {
            text += "\(sanitized(name)): \(sanitized(value))\r\n"
        }
        switch framing {
        case .contentLength(let length): text += "Content-Length: \(length)\r\n"
        case .chunked: text += "Transfer-Encoding: chunked\r\n"
        case .untilClose: break
        }
        text += keepAlive ? "\r\n" : "Connection: close\r\n\r\n"
        return Data(text.utf8)
    }

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
        // Scalars, not Characters: "\r\n" is a single Character equal to neither.
        guard text.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" }) else { return text }
        var clean = String.UnicodeScalarView()
        clean.append(contentsOf: text.unicodeScalars.filter { $0 != "\r" && $0 != "\n" })
        return String(clean)
    }
}
