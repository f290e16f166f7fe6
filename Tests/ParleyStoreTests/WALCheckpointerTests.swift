import Foundation
import ParleyCore
import Testing
import ParleyTesting
@testable import ParleyStore

/// The background checkpointer, on real SQLite files: the WAL is checkpointed off the writers'
/// path and starts over, a runaway WAL is truncated, writes go on during a checkpoint, and a
/// closed store leaves no WAL and loses nothing.
@Suite final class WALCheckpointerTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-wal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    var path: String { directory.appendingPathComponent("parley.sqlite").path }
    var walSize: Int { (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0 }

    /// An item of about 1 KB, so that every append dirties a few pages.
    static func item(_ index: Int) -> ItemRecord {
        ItemRecord(id: "item_\(index)", conversationID: "conv_1", message: .user(String(repeating: "word \(index) ", count: 100)), createdAt: Date())
    }

    /// Polls `condition` every 5 ms until it holds or `seconds` pass; returns whether it held.
    static func eventually(within seconds: Int = 30, _ condition: () throws -> Bool) async rethrows -> Bool {
        let deadline = ContinuousClock.now + TestDeadline.seconds(Double(seconds))
        while ContinuousClock.now < deadline {
            if try condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return try condition()
    }

    @Test func checkpointsPastTheThresholdAndTheWALStartsOver() async throws {
        let store = try SQLiteStore(path: path)
        var written = 0
        while (store.database.checkpointActivity?.checkpointsStarted ?? 0) == 0 && written < 5_000 {
            try await store.appendItem(Self.item(written))
            written += 1
        }
        #expect(store.database.checkpointActivity?.checkpointsStarted ?? 0 >= 1, "no checkpoint after \(written) items")

        // Once idle, the last checkpoint has copied every frame into the database file…
        let settled = await Self.eventually {
            guard let activity = store.database.checkpointActivity else { return false }
            return activity.checkpointsCompleted >= 1 && !activity.isRequested && !activity.isCheckpointing
                && activity.lastCheckpointedFrames == activity.lastLogFrames
        }
        #expect(settled, "\(String(describing: store.database.checkpointActivity))")
        // …so the next commit starts the WAL over from its first frame.
        try await store.appendItem(Self.item(written))
        #expect(try #require(store.database.checkpointActivity).latestWALFrames < WALCheckpointer.framesBeforeCheckpoint)
        #expect(try await store.items(conversationID: "conv_1").count == written + 1)
        #expect(try store.integrityCheck())
    }

    @Test func aRunawayWALStartsOverOnceNoReaderHoldsIt() async throws {
        let store = try SQLiteStore(path: path)
        // A reader holding a snapshot keeps the checkpointer from copying past it.
        let reader = try SQLiteDatabase(path: path)
        try reader.execute("BEGIN")
        #expect(try reader.query("SELECT count(*) FROM items").first?.first?.integer == 0)
        var written = 0
        while (store.database.checkpointActivity?.latestWALFrames ?? 0) < WALCheckpointer.framesBeforeRestart && written < 10_000 {
            try await store.appendItem(Self.item(written))
            written += 1
        }
        #expect(store.database.checkpointActivity?.restarts == 0)

        try reader.execute("COMMIT")
        try await store.appendItem(Self.item(written))
        written += 1
        let restarted = await Self.eventually { (store.database.checkpointActivity?.restarts ?? 0) >= 1 }
        #expect(restarted, "\(String(describing: store.database.checkpointActivity))")
        let grownSize = walSize
        #expect(grownSize > Int(WALCheckpointer.framesBeforeRestart) * 4_096)
        // The next commit writes the WAL from its first frame: the file stops growing.
        try await store.appendItem(Self.item(written))
        written += 1
        #expect(try #require(store.database.checkpointActivity).latestWALFrames < WALCheckpointer.framesBeforeCheckpoint)
        for _ in 0..<500 {
            try await store.appendItem(Self.item(written))
            written += 1
        }
        #expect(walSize == grownSize)
        #expect(try await store.items(conversationID: "conv_1").count == written)
        #expect(try store.integrityCheck())
    }

    @Test func writesCompleteWhileACheckpointRuns() async throws {
        let store = try SQLiteStore(path: path)
        var written = 0
        var writtenDuringACheckpoint = 0
        let deadline = ContinuousClock.now + .seconds(60)
        while writtenDuringACheckpoint < 3 && ContinuousClock.now < deadline {
            let before = try #require(store.database.checkpointActivity)
            try await store.appendItem(Self.item(written))
            written += 1
            let after = try #require(store.database.checkpointActivity)
            if before.isCheckpointing && after.isCheckpointing && before.checkpointsStarted == after.checkpointsStarted {
                writtenDuringACheckpoint += 1
            }
        }
        #expect(writtenDuringACheckpoint == 3, "\(written) items written, none while a checkpoint ran")
        store.close()
        let reopened = try SQLiteStore(path: path)
        #expect(try await reopened.items(conversationID: "conv_1").map(\.id) == (0..<written).map { "item_\($0)" })
        #expect(try reopened.integrityCheck())
    }

    @Test func closingStopsTheCheckpointerAndLeavesNoWAL() async throws {
        let store = try SQLiteStore(path: path)
        for index in 0..<3_000 { try await store.appendItem(Self.item(index)) }
        #expect(store.database.checkpointActivity?.checkpointsStarted ?? 0 >= 1)
        weak let checkpointer = store.database.currentCheckpointer
        #expect(checkpointer != nil)

        store.close()
        store.close()
        #expect(store.database.checkpointActivity == nil)
        #expect(walSize == 0)
        await #expect(throws: SQLiteError.self) { try await store.items(conversationID: "conv_1") }
        #expect(store.database.changes == 0)
        #expect(await Self.eventually { checkpointer == nil }, "the checkpointer thread still holds its checkpointer")

        let reopened = try SQLiteStore(path: path)
        #expect(try await reopened.items(conversationID: "conv_1").count == 3_000)
        #expect(try reopened.integrityCheck())
    }

    @Test func releasingTheStoreStopsTheCheckpointer() async throws {
        weak var checkpointer: WALCheckpointer?
        do {
            let store = try SQLiteStore(path: path)
            for index in 0..<100 { try await store.appendItem(Self.item(index)) }
            checkpointer = store.database.currentCheckpointer
            #expect(checkpointer != nil)
        }
        #expect(await Self.eventually { checkpointer == nil }, "the checkpointer thread outlived its store")
        #expect(walSize == 0)
        #expect(try await SQLiteStore(path: path).items(conversationID: "conv_1").count == 100)
    }

    @Test func anInMemoryDatabaseHasNoCheckpointer() throws {
        let database = try SQLiteDatabase(path: ":memory:")
        #expect(database.checkpointActivity == nil)
        try database.execute("CREATE TABLE t(x); INSERT INTO t VALUES(1)")
        #expect(try database.query("SELECT x FROM t") == [[.integer(1)]])
    }
}
