import Foundation

/// The final transcription of a turn, started while its silence window still runs.
///
/// With server VAD a turn ends only after `silence_duration_ms` of silence. Once the user
/// has been quiet for a shorter delay, the turn so far is transcribed at once; when the turn
/// does end with no more speech, its transcript is ready (or nearly) instead of starting
/// then. When the user speaks again, the early transcription is cancelled and dropped.
struct PreemptiveTranscription {
    /// When the silence began that the running transcription belongs to.
    private var silenceStartedAtMs: Int?
    private var task: Task<Transcription, any Error>?
    /// Counts the transcriptions started, so a result can be matched to the one still wanted.
    private(set) var generation = 0

    /// Whether a transcription is running or waiting to be taken.
    var isRunning: Bool { task != nil }

    /// The transcription running or waiting to be taken, left in place.
    var running: Task<Transcription, any Error>? { task }

    /// Follows the turn after each piece of input: drops a transcription whose silence was
    /// broken, and starts one once the silence is `delayMs` old.
    /// - Parameters:
    ///   - silenceStartedAtMs: the turn detector's current silence, nil when it hears speech or no turn.
    ///   - nowMs: the input time reached.
    ///   - delayMs: silence before transcribing; nil turns early transcription off.
    ///   - turn: the audio of the turn so far.
    ///   - transcribe: starts the final transcription of some audio.
    /// - Returns: the transcription when this call started one.
    @discardableResult
    mutating func follow(
        silenceStartedAtMs current: Int?, nowMs: Int, delayMs: Int?, turn: () -> [Float],
        transcribe: ([Float]) -> Task<Transcription, any Error>
    ) -> Task<Transcription, any Error>? {
        if silenceStartedAtMs != nil, silenceStartedAtMs != current { cancel() }
        guard let delayMs, let current, task == nil, nowMs - current >= delayMs else { return nil }
        let started = transcribe(turn())
        silenceStartedAtMs = current
        generation += 1
        task = started
        return started
    }

    /// Hands over the transcription of the turn that just ended, if one was started.
    mutating func take() -> Task<Transcription, any Error>? {
        defer {
            task = nil
            silenceStartedAtMs = nil
        }
        return task
    }

    /// Cancels and drops a transcription in progress.
    mutating func cancel() {
        task?.cancel()
        task = nil
        silenceStartedAtMs = nil
    }
}
