import CSQLite
import Foundation

/// Checkpoints a WAL database on a dedicated thread with its own connection, so that no writer
/// ever waits for a checkpoint's two fsyncs.
///
/// The writing connection turns SQLite's automatic checkpoint off and installs
/// `walCommitHook`, which calls `walDidGrow(frames:)` after every commit. Past
/// `framesBeforeCheckpoint` frames that wakes the thread, which runs a PASSIVE checkpoint:
/// it copies what it can without waiting for (or blocking) readers and writers. A failed
/// checkpoint is retried at the next wake-up.
///
/// `@unchecked Sendable`: `activity` is only touched while holding `condition`; `connection`
/// only on the checkpointer thread, which also closes it.
final class WALCheckpointer: @unchecked Sendable {
    /// WAL frames (pages) after which a checkpoint runs: SQLite's own automatic-checkpoint
    /// default (`SQLITE_DEFAULT_WAL_AUTOCHECKPOINT`).
    static let framesBeforeCheckpoint: Int32 = 1_000
    /// WAL frames after which a fully copied WAL is also restarted, which briefly takes the
    /// write lock. A writer starts the WAL over by itself when a checkpoint has copied all of
    /// it, but under a steady stream of commits a new one always lands first and the WAL
    /// would grow without bound. (A RESTART rather than a TRUNCATE: truncating a WAL of
    /// this size took ~30 ms on our disk, all of it while holding the write lock.)
    static let framesBeforeRestart: Int32 = 10 * framesBeforeCheckpoint

    /// What the checkpointer has done so far, for tests and diagnostics.
    struct Activity: Sendable, Equatable {
        /// Frames in the WAL after the latest commit, as the commit hook reported them.
        var latestWALFrames: Int32 = 0
        /// A commit asked for a checkpoint that has not started yet.
        var isRequested = false
        /// A checkpoint is running now.
        var isCheckpointing = false
        /// Checkpoints started, successful or not.
        var checkpointsStarted = 0
        /// PASSIVE checkpoints that succeeded.
        var checkpointsCompleted = 0
        /// RESTART checkpoints that succeeded: the next commit writes the WAL from its start.
        var restarts = 0
        /// The WAL's size, in frames, when the latest successful checkpoint ran.
        var lastLogFrames: Int32 = 0
        /// The WAL frames already copied into the database, as of the latest successful checkpoint.
        var lastCheckpointedFrames: Int32 = 0
    }

    private let connection: OpaquePointer
    private let condition = NSCondition()
    private var activity = Activity()
    private var isStopping = false
    private var isFinished = false

    /// Opens a second connection to `path` and starts the checkpointer thread.
    /// - Throws: `SQLiteError` when the connection cannot be opened.
    init(path: String) throws {
        connection = try SQLiteConnection.open(path: path)
        let thread = Thread { [self] in
            Thread.current.name = "parley-wal"  // From inside: Foundation names only the running thread in the OS.
            run()
        }
        thread.start()
    }

    /// A snapshot of what the checkpointer has done.
    var currentActivity: Activity {
        condition.lock()
        defer { condition.unlock() }
        return activity
    }

    /// Called by the commit hook with the WAL's size; wakes the thread past the threshold.
    /// Never waits for a checkpoint: the condition's lock is only held to flip flags.
    func walDidGrow(frames: Int32) {
        condition.lock()
        activity.latestWALFrames = frames
        if frames >= Self.framesBeforeCheckpoint {
            activity.isRequested = true
            condition.broadcast()
        }
        condition.unlock()
    }

    /// Lets a running checkpoint finish, then stops the thread and closes its connection.
    /// Returns once the thread is done; calling it again returns at once.
    func stop() {
        condition.lock()
        isStopping = true
        condition.broadcast()
        while !isFinished { condition.wait() }
        condition.unlock()
    }

    private func run() {
        while waitForRequest() {
            let outcome = checkpoint()
            condition.lock()
            activity.isCheckpointing = false
            if let outcome {
                activity.checkpointsCompleted += 1
                activity.lastLogFrames = outcome.logFrames
                activity.lastCheckpointedFrames = outcome.checkpointedFrames
                if outcome.restarted { activity.restarts += 1 }
            }
            condition.unlock()
        }
        sqlite3_close_v2(connection)
        condition.lock()
        isFinished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits for a commit's request; `false` once the checkpointer is stopping.
    private func waitForRequest() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !activity.isRequested && !isStopping { condition.wait() }
        guard !isStopping else { return false }
        activity.isRequested = false
        activity.isCheckpointing = true
        activity.checkpointsStarted += 1
        return true
    }

    /// Runs a PASSIVE checkpoint, then a RESTART attempt when the WAL is fully copied but
    /// too long; `nil` when the PASSIVE checkpoint failed.
    private func checkpoint() -> (logFrames: Int32, checkpointedFrames: Int32, restarted: Bool)? {
        var logFrames: Int32 = 0
        var checkpointedFrames: Int32 = 0
        let status = sqlite3_wal_checkpoint_v2(connection, "main", SQLITE_CHECKPOINT_PASSIVE, &logFrames, &checkpointedFrames)
        guard status == SQLITE_OK else { return nil }
        var restarted = false
        if logFrames >= Self.framesBeforeRestart && checkpointedFrames == logFrames {
            // An attempt only: without a busy handler it gives up at once instead of holding
            // the write lock while it waits for a writer or a reader.
            SQLiteConnection.failWhenBusy(connection)
            restarted = sqlite3_wal_checkpoint_v2(connection, "main", SQLITE_CHECKPOINT_RESTART, nil, nil) == SQLITE_OK
            SQLiteConnection.waitWhileBusy(connection)
        }
        return (logFrames, checkpointedFrames, restarted)
    }
}

/// The writing connection's `sqlite3_wal_hook`: SQLite calls it after every commit with the
/// number of frames in the WAL; `context` is the unretained `WALCheckpointer`.
func walCommitHook(
    context: UnsafeMutableRawPointer?, connection: OpaquePointer?, databaseName: UnsafePointer<CChar>?, frames: Int32
) -> Int32 {
    guard let context else { return SQLITE_OK }
    Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue().walDidGrow(frames: frames)
    return SQLITE_OK
}
