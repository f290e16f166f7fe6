import Foundation

/// The work a session does on a turn while its silence window still runs: the turn's early
/// transcription (`PreemptiveTranscription`) and, where allowed, the answer to that early
/// transcript (`SpeculativeResponse`), held back until the turn ends.
///
/// A value type: it decides which early work is still wanted and drops (cancels) the rest;
/// the session starts the tasks it hands it and carries out the rest.
///
/// ```swift
/// var early = PreemptiveGeneration()
/// let started = early.follow(silenceStartedAtMs: silence, nowMs: now, delayMs: 120, turn: { turnSoFar }, transcribe: startTranscription)
/// // …the transcript arrives while the silence goes on:
/// if early.mayAnswer(generation: generation) { early.answering(SpeculativeResponse(…)) }
/// // …the turn ends:
/// let handover = early.turnEnded(reachedMaximumLength: false)
/// ```
struct PreemptiveGeneration {
    /// The transcription handed over when the turn ends, with its result when the answer
    /// started on it already has it.
    struct Handover {
        var transcription: Task<Transcription, any Error>
        var result: Transcription?
    }

    private var transcription = PreemptiveTranscription()
    /// The answer being prepared (before its turn ended) or waiting for the turn's final transcript.
    private(set) var answer: SpeculativeResponse?

    /// Whether an early transcription is running or waiting to be taken.
    var isTranscribing: Bool { transcription.isRunning }

    /// The early transcription running or waiting to be taken, left in place.
    var runningTranscription: Task<Transcription, any Error>? { transcription.running }

    /// Counts the early transcriptions started, so a transcript can be matched to the one still wanted.
    var generation: Int { transcription.generation }

    /// Follows the turn after each piece of input: drops early work the user spoke over, and
    /// starts the turn's transcription once its silence is `delayMs` old.
    /// - Parameters:
    ///   - silenceStartedAtMs: the turn detector's current silence, nil when it hears speech or no turn.
    ///   - nowMs: the input time reached.
    ///   - delayMs: silence before transcribing; nil turns early transcription off.
    ///   - turn: the audio of the turn so far.
    ///   - transcribe: starts the final transcription of some audio.
    /// - Returns: the transcription when this call started one.
    mutating func follow(
        silenceStartedAtMs: Int?, nowMs: Int, delayMs: Int?, turn: () -> [Float],
        transcribe: ([Float]) -> Task<Transcription, any Error>
    ) -> Task<Transcription, any Error>? {
        let started = transcription.follow(silenceStartedAtMs: silenceStartedAtMs, nowMs: nowMs, delayMs: delayMs, turn: turn, transcribe: transcribe)
        // An answer to words the user has since added to is no answer to the turn.
        if let answer, !answer.turnEnded, !transcription.isRunning || answer.generation != transcription.generation {
            dropAnswer()
        }
        return started
    }

    /// Whether an answer may start on the transcript of early transcription `generation`: that
    /// transcription is still the one wanted and nothing answers it yet.
    func mayAnswer(generation: Int) -> Bool {
        answer == nil && transcription.isRunning && transcription.generation == generation
    }

    /// Keeps the answer started on the early transcript.
    mutating func answering(_ answer: SpeculativeResponse) {
        self.answer = answer
    }

    /// Holds back an event of the answer `responseID`, delivered by its runner at `time`.
    /// - Returns: whether the answer goes on; `false` when it is not the answer being prepared,
    ///   or when it failed: a provider failure before the turn ended is not the turn's, which
    ///   gets a fresh response (the answer is dropped).
    mutating func hold(_ event: ResponseRunner.Event, from responseID: String, at time: Duration) -> Bool {
        guard answer?.id == responseID else { return false }
        if case .failed = event {
            dropAnswer()
            return false
        }
        answer?.held.append(SpeculativeResponse.HeldEvent(event: event, at: time))
        return true
    }

    /// The turn ended: hands over its early transcription, unless speech went on to the
    /// maximum utterance length and forced the end (then the early work is dropped: it did
    /// not hear the whole turn). The answer, if any, waits for the turn's final transcript.
    mutating func turnEnded(reachedMaximumLength: Bool) -> Handover? {
        let generation = transcription.generation
        let early = transcription.take()
        if reachedMaximumLength {
            early?.cancel()
            dropAnswer()
        }
        answer?.turnEnded = true
        guard !reachedMaximumLength, let early else { return nil }
        return Handover(transcription: early, result: answer.flatMap { $0.generation == generation ? $0.transcription : nil })
    }

    /// Hands over the answer prepared for a turn that has ended, when it answered exactly its
    /// final `transcript` after the same conversation (`previousItemID` the item before the turn).
    mutating func takeAnswer(to transcript: String, after previousItemID: String?) -> SpeculativeResponse? {
        guard let answer, answer.turnEnded, answer.transcript == transcript, answer.lastItemID == previousItemID else { return nil }
        self.answer = nil
        return answer
    }

    /// Drops the answer prepared for a turn that has ended (its final transcript did not match).
    mutating func dropEndedTurnsAnswer() {
        guard answer?.turnEnded == true else { return }
        dropAnswer()
    }

    /// Cancels and drops the answer.
    mutating func dropAnswer() {
        answer?.task.cancel()
        answer = nil
    }

    /// Cancels and drops the early transcription and the answer.
    mutating func cancel() {
        transcription.cancel()
        dropAnswer()
    }
}
