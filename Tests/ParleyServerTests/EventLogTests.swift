import Foundation
import Testing
@testable import ParleyServer

@Suite struct EventLogTests {
    @Test func linesAreJSONWithAnISO8601Timestamp() throws {
        let lines = LockedLines()
        let log = EventLog { lines.add($0) }
        log.log("session.started", session: "sess_1", ["sessions": 3, "vad": "silero"])
        let line = try #require(lines.all.first)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["event"] as? String == "session.started")
        #expect(object["session"] as? String == "sess_1")
        #expect(object["sessions"] as? Double == 3)
        let stamp = try #require(object["ts"] as? String)
        let parser = ISO8601DateFormatter()
        parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let parsed = try #require(parser.date(from: stamp), "not ISO 8601: \(stamp)")
        #expect(abs(parsed.timeIntervalSinceNow) < 60)
    }

    @Test func timestampsAreUTCToTheMillisecond() {
        #expect(EventLog.timestamp(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(EventLog.timestamp(Date(timeIntervalSince1970: 1_796_076_820.333)) == "2026-11-30T22:13:40.333Z")
    }
}

/// Log lines collected from any thread. `@unchecked Sendable`: `lines` is guarded by `lock`.
private final class LockedLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func add(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}
