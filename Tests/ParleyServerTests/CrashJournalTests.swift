import Foundation
import ParleyServer
import Testing

@Suite struct CrashJournalTests {
    static func scratchDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("parley-journal-\(UUID().uuidString)")
    }

    /// A process id above Linux's largest (2^22), so no process has it.
    static let deadProcessID: Int32 = 2_147_483_000

    @Test func aRunThatEndsCleanlyIsNotReportedAsACrash() throws {
        let directory = Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try CrashJournal.open(in: directory, processID: Self.deadProcessID)
        first.record(#"{"event":"session.started"}"#)
        first.closeCleanly()
        #expect(try CrashJournal.open(in: directory).previousCrash == nil)
    }

    @Test func aRunThatLeftItsMarkerIsReportedWithItsLastEvents() throws {
        let directory = Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let crashed = try CrashJournal.open(in: directory, processID: Self.deadProcessID, now: Date(timeIntervalSince1970: 0))
        for index in 0..<3 { crashed.record(#"{"event":"e\#(index)"}"#) }
        let crash = try #require(try CrashJournal.open(in: directory).previousCrash)
        #expect(crash.processID == Self.deadProcessID)
        #expect(crash.started == "1970-01-01T00:00:00.000Z")
        #expect(crash.lastEvents == [#"{"event":"e0"}"#, #"{"event":"e1"}"#, #"{"event":"e2"}"#])
        #expect(crash.report.first?.hasPrefix("restarted after a crash: the previous run (pid 2147483000") == true)
        // The report is made once: the new run has its own marker and an empty ring.
        #expect(try CrashJournal.open(in: directory).previousCrash == nil)
    }

    @Test func aMarkerOfALiveProcessIsNotACrash() throws {
        let directory = Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try CrashJournal.open(in: directory, processID: 1)  // init is always alive
        #expect(try CrashJournal.open(in: directory).previousCrash == nil)
    }

    @Test func theRingKeepsTheNewestWholeLinesAfterWrappingAround() throws {
        let directory = Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let crashed = try CrashJournal.open(in: directory, processID: Self.deadProcessID)
        let filler = String(repeating: "x", count: 100)
        for index in 0..<2_000 { crashed.record("line \(index) \(filler)") }
        let crash = try #require(try CrashJournal.open(in: directory).previousCrash)
        #expect(crash.lastEvents.count == 40)
        #expect(crash.lastEvents.last == "line 1999 \(filler)")
        #expect(crash.lastEvents.first == "line 1960 \(filler)")
    }
}
