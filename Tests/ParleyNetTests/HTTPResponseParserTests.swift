import Foundation
import Testing
@testable import ParleyNet

@Suite struct HTTPResponseParserTests {
    /// Parses `text` cut at `split` (and, when given, at a second point), returning every event
    /// with the body pieces joined.
    private func parse(_ text: String, method: String = "GET", splits: [Int] = [], closeAtEnd: Bool = false) throws -> (status: Int?, headers: [String: String], body: String, ended: Bool, reusable: Bool) {
        var parser = HTTPResponseParser(method: method)
        let bytes = Array(text.utf8)
        var cuts = [0] + splits.filter { $0 > 0 && $0 < bytes.count }.sorted() + [bytes.count]
        cuts = cuts.enumerated().filter { $0.offset == 0 || $0.element != cuts[$0.offset - 1] }.map(\.element)
        var events: [HTTPResponseParser.Event] = []
        for (start, end) in zip(cuts, cuts.dropFirst()) {
            events += try bytes[start..<end].withUnsafeBytes { try parser.push($0) }
        }
        if closeAtEnd { events += try parser.connectionClosed() }
        var status: Int?
        var headers: [String: String] = [:]
        var body = Data()
        var ended = false
        for event in events {
            switch event {
            case .head(let code, let fields): (status, headers) = (code, fields)
            case .body(let piece): body.append(piece)
            case .end: ended = true
            }
        }
        return (status, headers, String(decoding: body, as: UTF8.self), ended, parser.connectionReusable)
    }

    @Test func aContentLengthBodyParsesWhereverTheBytesAreSplit() throws {
        let text = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 11\r\nX-Twice: a\r\nX-Twice: b\r\n\r\nhello world"
        for split in 0...text.utf8.count {
            let result = try parse(text, splits: [split])
            #expect(result.status == 200)
            #expect(result.headers["content-type"] == "text/plain")
            #expect(result.headers["x-twice"] == "a, b")
            #expect(result.body == "hello world")
            #expect(result.ended && result.reusable)
        }
    }

    @Test func aChunkedBodyWithExtensionsAndTrailersParsesWhereverTheBytesAreSplit() throws {
        let text = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6;name=value\r\nhello \r\n5\r\nworld\r\n0\r\nX-Trailer: yes\r\n\r\n"
        for first in 0...text.utf8.count {
            for second in stride(from: first, through: text.utf8.count, by: 7) {
                let result = try parse(text, splits: [first, second])
                #expect(result.body == "hello world")
                #expect(result.ended && result.reusable)
            }
        }
    }

    @Test func informationalHeadsAreSkipped() throws {
        let result = try parse("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok")
        #expect(result.status == 201)
        #expect(result.body == "ok")
    }

    @Test func aBodyWithoutLengthRunsUntilTheConnectionCloses() throws {
        let result = try parse("HTTP/1.1 200 OK\r\n\r\nall of it", closeAtEnd: true)
        #expect(result.body == "all of it")
        #expect(result.ended)
        #expect(!result.reusable)
    }

    @Test func headRequestsAndNoContentHaveNoBody() throws {
        #expect(try parse("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n", method: "HEAD").ended)
        #expect(try parse("HTTP/1.1 204 No Content\r\n\r\n").ended)
    }

    @Test func closeAndOldVersionsEndTheConnection() throws {
        #expect(!(try parse("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").reusable))
        #expect(!(try parse("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").reusable))
        #expect(try parse("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n").reusable)
    }

    @Test(arguments: [
        "HTTP/2 200 OK\r\n\r\n",
        "HTTP/1.1 2000 OK\r\n\r\n",
        "HTTP/1.1 200 OK\r\nNo colon here\r\n\r\n",
        "HTTP/1.1 200 OK\r\nName : space before colon\r\n\r\n",
        "HTTP/1.1 200 OK\r\nA: 1\r\n folded: continuation\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA",
        "HTTP/1.1 101 Switching Protocols\r\n\r\n",
    ])
    func malformedResponsesAreRefused(text: String) {
        #expect(throws: HTTPResponseParser.Failure.self) { _ = try parse(text) }
    }

    @Test func limitsHoldBeforeMemoryGrows() {
        var parser = HTTPResponseParser(method: "GET", maxHeadBytes: 1_024)
        let head = Array(("HTTP/1.1 200 OK\r\nX-Big: " + String(repeating: "a", count: 2_000)).utf8)
        #expect(throws: HTTPResponseParser.Failure.self) { _ = try head.withUnsafeBytes { try parser.push($0) } }

        var chunked = HTTPResponseParser(method: "GET")
        let endless = Array(("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + String(repeating: "0", count: 5_000)).utf8)
        #expect(throws: HTTPResponseParser.Failure.self) { _ = try endless.withUnsafeBytes { try chunked.push($0) } }
    }

    @Test func aResponseCutShortIsAnError() throws {
        var parser = HTTPResponseParser(method: "GET")
        _ = try Array("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf".utf8).withUnsafeBytes { try parser.push($0) }
        #expect(throws: HTTPResponseParser.Failure.self) { _ = try parser.connectionClosed() }
        var silent = HTTPResponseParser(method: "GET")
        #expect(throws: HTTPResponseParser.Failure.self) { _ = try silent.connectionClosed() }
    }
}
