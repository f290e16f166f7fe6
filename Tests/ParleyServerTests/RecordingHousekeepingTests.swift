import Foundation
import ParleyCore
import ParleyNet
import Testing
@testable import ParleyServer

/// Recording housekeeping on real files in a scratch folder, on a clock the test sets: old
/// recordings go after the retention period, the oldest go while the quota is exceeded, a live
/// recording stays, and every removal is logged; then through a real server, whose REST API
/// stops listing what a sweep removed.
@Suite("Recording housekeeping")
struct RecordingHousekeepingTests {
    /// The time the unit tests' sweeps run at.
    static let now = Date(timeIntervalSince1970: 1_900_000_000)
    static let day: TimeInterval = 86_400

    @Test("recordings last written before the retention period are removed and logged; newer ones stay")
    func retentionRemovesOldRecordings() throws {
        let (recordings, logged) = Self.recordings()
        try Self.plant("conv_old", in: recordings, bytes: 1_044, lastWritten: Self.now - 31 * Self.day)
        try Self.plant("conv_recent", in: recordings, bytes: 2_044, lastWritten: Self.now - 29 * Self.day)
        var limits = RecordingLimits()
        limits.retentionDays = 30
        let housekeeping = RecordingHousekeeping(recordings: recordings, limits: limits, log: logged.log, now: { Self.now })

        #expect(housekeeping.sweep() == [.init(conversationID: "conv_old", bytes: 1_044, reason: .retention)])
        #expect(recordings.all().map(\.conversationID) == ["conv_recent"])
        let line = try #require(logged.events("recording.removed").first)
        #expect(line["conversation"]?.stringValue == "conv_old")
        #expect(line["bytes"]?.numberValue == 1_044)
        #expect(line["reason"]?.stringValue == "retention")
        #expect(housekeeping.sweep().isEmpty)
        #expect(logged.events("recording.removed").count == 1)
    }

    @Test("with no retention period (0 or forever) even a recording ten years old stays")
    func keptForever() throws {
        let (recordings, logged) = Self.recordings()
        try Self.plant("conv_ancient", in: recordings, bytes: 1_044, lastWritten: Self.now - 3_650 * Self.day)
        var limits = RecordingLimits()
        limits.retentionDays = nil
        let housekeeping = RecordingHousekeeping(recordings: recordings, limits: limits, log: logged.log, now: { Self.now })
        #expect(housekeeping.sweep().isEmpty)
        #expect(recordings.all().map(\.conversationID) == ["conv_ancient"])
        #expect(logged.events("recording.removed").isEmpty)
    }

    @Test("over the quota the least recently written go first, until the rest fit")
    func quotaRemovesOldestFirst() throws {
        let (recordings, logged) = Self.recordings()
        // Planted out of order: the names say which is oldest.
        try Self.plant("conv_3", in: recordings, bytes: 444, lastWritten: Self.now - 3_600)
        try Self.plant("conv_1", in: recordings, bytes: 444, lastWritten: Self.now - 3 * 3_600)
        try Self.plant("conv_4", in: recordings, bytes: 444, lastWritten: Self.now - 60)
        try Self.plant("conv_2", in: recordings, bytes: 444, lastWritten: Self.now - 2 * 3_600)
        var limits = RecordingLimits()
        limits.quotaBytes = 1_000
        let housekeeping = RecordingHousekeeping(recordings: recordings, limits: limits, log: logged.log, now: { Self.now })

        #expect(housekeeping.sweep() == [
            .init(conversationID: "conv_1", bytes: 444, reason: .quota), .init(conversationID: "conv_2", bytes: 444, reason: .quota),
        ])
        #expect(recordings.all().map(\.conversationID) == ["conv_3", "conv_4"])
        #expect(logged.events("recording.removed").map { $0["conversation"]?.stringValue } == ["conv_1", "conv_2"])
        #expect(logged.events("recording.removed").allSatisfy { $0["reason"]?.stringValue == "quota" })
    }

    @Test("a recording being written is never removed, though it counts toward the quota; once complete it may be")
    func liveRecordingStays() async throws {
        let (recordings, logged) = Self.recordings()
        // A conversation recorded before (one second, 96,044 bytes), resumed in a call going on now.
        let url = try #require(recordings.url(for: "conv_live"))
        try FileManager.default.createDirectory(at: recordings.directory, withIntermediateDirectories: true)
        try WAVFile.pcm16Data(samples: [Int16](repeating: 0, count: 2 * 24_000), format: AudioFormat(sampleRate: 24_000, channelCount: 2)).write(to: url)
        let started = recordings.recorder(
            conversationID: "conv_live", agentSetting: true, makeResampler: { from, to in try! LinearResampler(from: from, to: to) }
        )
        let recorder = try #require(started)
        // Its file looks older than any limit allows.
        try FileManager.default.setAttributes([.modificationDate: Date() - 400 * Self.day], ofItemAtPath: url.path)
        try Self.plant("conv_idle", in: recordings, bytes: 444, lastWritten: Date() - 3_600)
        var limits = RecordingLimits()
        limits.retentionDays = 30
        limits.quotaBytes = 1_000
        let housekeeping = RecordingHousekeeping(recordings: recordings, limits: limits, log: logged.log)

        // The live recording alone exceeds the quota: the idle one goes, the live one stays.
        #expect(housekeeping.sweep() == [.init(conversationID: "conv_idle", bytes: 444, reason: .quota)])
        #expect(recordings.all().map(\.conversationID) == ["conv_live"])

        var completions = recordings.completions.makeAsyncIterator()
        recorder.finish()
        #expect(await completions.next() != nil)
        #expect(housekeeping.sweep().map(\.conversationID) == ["conv_live"])
        #expect(recordings.all().isEmpty)
        #expect(logged.events("recording.removed").count == 2)
    }

    @Test("a server sweeps at start: REST no longer lists a recording past the retention period")
    func serverSweepsAtStart() async throws {
        let logged = LoggedEvents()
        let server = try TestServer.start(log: logged.log) { settings in
            let recordings = CallRecordings(dataDirectory: settings.dataDirectory, recordsByDefault: false, log: .silent)
            try? Self.plant("conv_expired", in: recordings, bytes: 4_044, lastWritten: Date() - 31 * Self.day)
            try? Self.plant("conv_kept", in: recordings, bytes: 4_044, lastWritten: Date() - 29 * Self.day)
        }
        defer { Task { await server.stop() } }

        let listed = try await server.request("GET", "/v1/recordings").body["data"]?.arrayElements ?? []
        #expect(listed.map { $0["conversation_id"]?.stringValue } == ["conv_kept"])
        #expect(try await server.request("GET", "/v1/conversations/conv_expired/recording").status == 404)
        let removal = try #require(logged.events("recording.removed").first)
        #expect(removal["conversation"]?.stringValue == "conv_expired" && removal["reason"]?.stringValue == "retention")
    }

    @Test("after a call's recording completes, a server sweeps for the quota: the oldest recording is no longer listed")
    func serverSweepsAfterARecording() async throws {
        let logged = LoggedEvents()
        let server = try TestServer.start(log: logged.log) { settings in
            settings.recordingLimits.quotaBytes = 1_048_576
            let recordings = CallRecordings(dataDirectory: settings.dataDirectory, recordsByDefault: false, log: .silent)
            try? Self.plant("conv_earlier", in: recordings, bytes: 1_000_044, lastWritten: Date() - 3_600)
        }
        defer { Task { await server.stop() } }
        #expect(try await server.request("GET", "/v1/recordings").body["data"]?.arrayElements?.count == 1)

        let (conversationID, client) = try await RecordingTests.connect(server, agent: #"{"name":"Recorded","recordings":true}"#)
        try await RecordingTests.talk(client)
        let removal = try #require(await logged.first("recording.removed", within: 30))
        #expect(removal["conversation"]?.stringValue == "conv_earlier" && removal["reason"]?.stringValue == "quota")
        #expect(removal["bytes"]?.numberValue == 1_000_044)

        let listed = try await server.request("GET", "/v1/recordings").body["data"]?.arrayElements ?? []
        #expect(listed.map { $0["conversation_id"]?.stringValue } == [conversationID])
        #expect(try await server.request("GET", "/v1/conversations/conv_earlier/recording").status == 404)
        // Deleting the conversation still takes its recording with it.
        #expect(try await server.request("DELETE", "/v1/conversations/\(conversationID)").status == 200)
        #expect(try await server.request("GET", "/v1/recordings").body["data"]?.arrayElements?.isEmpty == true)
    }

    // MARK: - Helpers

    /// Recordings in a fresh scratch folder, and the lines their housekeeping logs.
    static func recordings() -> (CallRecordings, LoggedEvents) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-housekeeping-\(UUID().uuidString)")
        let logged = LoggedEvents()
        return (CallRecordings(dataDirectory: directory, recordsByDefault: true, log: logged.log), logged)
    }

    /// A recording of `conversationID`, `bytes` long (a WAV header and whole frames), last written at `lastWritten`.
    static func plant(_ conversationID: String, in recordings: CallRecordings, bytes: Int, lastWritten: Date) throws {
        let url = try #require(recordings.url(for: conversationID))
        try FileManager.default.createDirectory(at: recordings.directory, withIntermediateDirectories: true)
        try Data(count: bytes).write(to: url)
        try FileManager.default.setAttributes([.modificationDate: lastWritten], ofItemAtPath: url.path)
    }
}
