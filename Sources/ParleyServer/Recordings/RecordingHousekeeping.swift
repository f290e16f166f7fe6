import Foundation
import ParleySync

/// Keeps the recordings within their `RecordingLimits`: removes each one last written longer
/// ago than the retention period, then, while all of them together take more than the quota,
/// the least recently written first. A recording being written now (a live call) is never
/// removed, though its bytes count toward the quota. Every removal is logged as
/// `recording.removed` with the conversation id, its bytes and the reason (`retention` or `quota`).
///
/// ```swift
/// let housekeeping = RecordingHousekeeping(recordings: recordings, limits: settings.recordingLimits, log: log)
/// housekeeping.start()   // sweeps now, hourly and after every recording that completes
/// ```
final class RecordingHousekeeping: Sendable {
    /// Why a recording was removed.
    enum Reason: String, Sendable {
        /// It was last written longer ago than the retention period.
        case retention
        /// The recordings together took more than the quota, and it was among the oldest.
        case quota
    }

    /// One recording a sweep removed.
    struct Removal: Sendable, Hashable {
        var conversationID: String
        var bytes: Int
        var reason: Reason
    }

    /// How often the periodic sweep runs.
    static let interval = Duration.seconds(3600)

    private let recordings: CallRecordings
    private let limits: RecordingLimits
    private let log: EventLog
    private let now: @Sendable () -> Date
    /// Held for a whole sweep, so that sweeps never overlap.
    private let sweeping = Locked(())
    private let loop = Locked<Task<Void, Never>?>(nil)

    /// Housekeeping of `recordings` within `limits`; `now` tells the time recordings' ages are measured at.
    init(recordings: CallRecordings, limits: RecordingLimits, log: EventLog, now: @escaping @Sendable () -> Date = Date.init) {
        self.recordings = recordings
        self.limits = limits
        self.log = log
        self.now = now
    }

    /// Sweeps once now, then starts sweeping every hour and after each recording completes, until `stop()`.
    func start() {
        sweep()
        let task = Task { [self] in await runUntilCancelled() }
        loop.withLock { $0 = task }
    }

    /// Stops the periodic sweeps.
    func stop() {
        loop.withLock { $0 }?.cancel()
    }

    private func runUntilCancelled() async {
        await withDiscardingTaskGroup { group in
            group.addTask { [self] in
                while (try? await Task.sleep(for: Self.interval)) != nil { sweep() }
            }
            group.addTask { [self] in
                for await _ in recordings.completions { sweep() }
            }
        }
    }

    /// Removes what is beyond the limits now and logs each removal.
    /// - Returns: the recordings removed, in the order they were.
    @discardableResult
    func sweep() -> [Removal] {
        sweeping.withLock { _ in
            let oldestFirst = recordings.all().sorted { ($0.file.lastWritten, $0.conversationID) < ($1.file.lastWritten, $1.conversationID) }
            var removals: [Removal] = []
            var kept: [(conversationID: String, file: RecordingFile)] = []
            let sweptAt = now()
            for recording in oldestFirst {
                if let retention = limits.retentionSeconds, sweptAt.timeIntervalSince(recording.file.lastWritten) > retention,
                   let removal = remove(recording.conversationID, bytes: recording.file.length, reason: .retention) {
                    removals.append(removal)
                } else {
                    kept.append(recording)
                }
            }
            guard let quota = limits.quotaBytes else { return removals }
            var total = kept.reduce(0) { $0 + $1.file.length }
            for recording in kept where total > quota {
                if let removal = remove(recording.conversationID, bytes: recording.file.length, reason: .quota) {
                    removals.append(removal)
                    total -= removal.bytes
                }
            }
            return removals
        }
    }

    /// Removes one recording unless it is live, and logs what happened.
    private func remove(_ conversationID: String, bytes: Int, reason: Reason) -> Removal? {
        do {
            guard try recordings.removeUnlessLive(conversationID: conversationID) else { return nil }
        } catch {
            log.log("recording.remove_failed", ["conversation": .string(conversationID), "reason": .string(reason.rawValue), "error": .string("\(error)")])
            return nil
        }
        log.log("recording.removed", ["conversation": .string(conversationID), "bytes": .number(Double(bytes)), "reason": .string(reason.rawValue)])
        return Removal(conversationID: conversationID, bytes: bytes, reason: reason)
    }
}
