import Foundation
import ParleyStore

/// Where a moment of a conversation falls in its recording: one file holds every session of
/// the conversation, one after the other, each on the clock of its caller's audio.
struct RecordingPlacement {
    /// Where each call (by id) begins in the recording, in milliseconds.
    private let offsets: [String: Double]

    init(calls: [CallRecord], now: Date) {
        var offsets: [String: Double] = [:]
        var elapsedMs = 0.0
        for call in calls.sorted(by: { $0.startedAt < $1.startedAt }) {
            offsets[call.id] = elapsedMs
            elapsedMs += call.durationSeconds(now: now) * 1_000
        }
        self.offsets = offsets
    }

    /// Where the caller's speech that ended the turn ended, in milliseconds of the recording;
    /// `nil` when the turn was not spoken or its session is unknown. Earlier sessions count
    /// with their length (the recording holds about that much of each).
    func milliseconds(ofSpeechEndIn figures: TurnFiguresRecord) -> Double? {
        guard let offsetMs = offsets[figures.sessionID], let speechEnd = figures.speechEndAudioMs else { return nil }
        return (offsetMs + Double(speechEnd)).rounded()
    }
}
