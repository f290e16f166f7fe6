import Foundation
import Testing
@testable import ParleyNet

@Suite struct ServerSentEventParserTests {
    /// A chat-completions-like stream with comments, an event type, an id, a retry field,
    /// multi-line data, an empty data line and the final `[DONE]`.
    static let sample = """
        : keep-alive comment\n\
        retry: 2500\n\
        data: {"a":1}\n\
        \n\
        event: update\n\
        id: 7\n\
        data: first line\n\
        data:second line\n\
        \n\
        data\n\
        \n\
        data:  two spaces\n\
        unknownfield: ignored\n\
        \n\
        data: [DONE]\n\
        \n
        """

    static let sampleEvents = [
        ServerSentEvent(type: "message", data: #"{"a":1}"#, lastEventID: nil),
        ServerSentEvent(type: "update", data: "first line\nsecond line", lastEventID: "7"),
        ServerSentEvent(type: "message", data: "", lastEventID: "7"),
        ServerSentEvent(type: "message", data: " two spaces", lastEventID: "7"),
        ServerSentEvent(type: "message", data: "[DONE]", lastEventID: "7"),
    ]

    static func parse(_ pieces: [[UInt8]]) throws -> [ServerSentEvent] {
        var parser = ServerSentEventParser()
        var events: [ServerSentEvent] = []
        for piece in pieces { events += try parser.push(piece) }
        return events + parser.finish()
    }

    @Test(arguments: ["\n", "\r\n", "\r"])
    func everySplitPointGivesTheSameEvents(lineEnding: String) throws {
        let bytes = Array(Self.sample.replacingOccurrences(of: "\n", with: lineEnding).utf8)
        for split in 0...bytes.count {
            let events = try Self.parse([Array(bytes[..<split]), Array(bytes[split...])])
            #expect(events == Self.sampleEvents, "split at \(split)")
        }
    }

    @Test func byteByByte() throws {
        let bytes = Array(Self.sample.replacingOccurrences(of: "\n", with: "\r\n").utf8)
        #expect(try Self.parse(bytes.map { [$0] }) == Self.sampleEvents)
    }

    @Test func retryIsRemembered() throws {
        var parser = ServerSentEventParser()
        _ = try parser.push(Array("retry: 2500\n\nretry: soon\n\n".utf8))
        #expect(parser.retryMilliseconds == 2500)
    }

    @Test(arguments: [
        ("data: x\n\n", ["x"]),
        ("data: x\n", ["x"]),  // unterminated last event still delivered at the end
        ("data: x", ["x"]),
        (": only a comment\n\n", []),
        ("event: ping\n\n", []),  // no data: nothing dispatched
        ("data:\n\n", [""]),
        ("data: a\n\n\n\ndata: b\n\n", ["a", "b"]),
        ("\u{FEFF}data: bom\n\n", ["bom"]),
        ("data: é😀\n\n", ["é😀"]),
        ("data: a:b: c\n\n", ["a:b: c"]),
    ] as [(String, [String])])
    func table(input: String, expected: [String]) throws {
        let events = try Self.parse([Array(input.utf8)])
        #expect(events.map(\.data) == expected)
    }

    @Test func byteOrderMarkOnlyAtStreamStart() throws {
        let bytes: [UInt8] = Array("data: a\n\n".utf8) + [0xEF, 0xBB, 0xBF] + Array("data: b\n\n".utf8)
        let events = try Self.parse([bytes])
        // A BOM in the middle is part of the field name, so the second line is an unknown field.
        #expect(events.map(\.data) == ["a"])
    }

    @Test func eventTypeResetsAfterDispatch() throws {
        let events = try Self.parse([Array("event: error\ndata: x\n\ndata: y\n\n".utf8)])
        #expect(events.map(\.type) == ["error", "message"])
    }

    @Test func oversizedLineIsRefused() {
        var parser = ServerSentEventParser(maxEventBytes: 64)
        #expect(throws: ServerSentEventParser.Failure.eventTooLarge(limit: 64)) {
            _ = try parser.push(Array(repeating: UInt8(ascii: "a"), count: 65))
        }
    }

    @Test func oversizedEventAcrossLinesIsRefused() {
        var parser = ServerSentEventParser(maxEventBytes: 64)
        let line = Array("data: \(String(repeating: "b", count: 40))\n".utf8)
        #expect(throws: ServerSentEventParser.Failure.eventTooLarge(limit: 64)) {
            _ = try parser.push(line + line)
        }
    }
}
