import Foundation
import ParleyStore

/// Where a moment of a conversation falls in its recording: one file holds every session of
/// the conversation, one after the other, each from its start.
struct RecordingPlacement {
    /// Each call's id, start, and where it begins in the recording (milliseconds).
    private let offsets: [String: (start: Date, offsetMs: Double)]

    init(calls: [CallRecord], now: Date) {
        var offsets: [String: (Date, Double)] = [:]
        var elapsedMs = 0.0
        for call in calls.sorted(by: { $0.startedAt < $1.startedAt }) {
            offsets[call.id] = (call.startedAt, elapsedMs)
            elapsedMs += call.durationSeconds(now: now) * 1_000
        }
        self.offsets = offsets
    }

    /// Where the caller's speech that ended the turn ended, in milliseconds of the recording;
    /// `nil` when the turn's session is unknown.
    func milliseconds(ofSpeechEndIn figures: TurnFiguresRecord) -> Double? {
        guard let call = offsets[figures.sessionID] else { return nil }
        let speechEnd = figures.turnEndedAt.timeIntervalSince(call.start) * 1_000 - (figures.silenceWindowMs ?? 0) - (figures.detectorWaitMs ?? 0)
        return max(0, (call.offsetMs + speechEnd).rounded())
    }
}
