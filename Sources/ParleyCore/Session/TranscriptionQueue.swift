import Foundation

/// Committed utterances waiting for their final transcripts, transcribed one at a time in the
/// order they were committed, and the response asked for meanwhile, which waits for them so
/// that it hears what was said.
///
/// A value type: the session adds utterances, asks `next()` what to do, carries that out, and
/// reports each transcript with `finished(_:)`.
///
/// ```swift
/// var queue = TranscriptionQueue()
/// queue.add(utterance)
/// while let action = queue.next() {
///     switch action {
///     case .transcribe(let utterance): startTranscribing(utterance)  // then `queue.finished(utterance)`
///     case .takeTranscript(let utterance, let transcription): queue.finished(utterance); use(transcription)
///     case .startResponse(let response, let committedAt): start(response, committedAt)
///     }
/// }
/// ```
struct TranscriptionQueue: Sendable {
    /// A committed utterance waiting for its final transcript.
    struct Utterance: Sendable {
        var itemID: String
        var samples: [Float]
        var committedAt: Duration
        var createsResponse: Bool
        /// The transcription started during the silence window, when there was one.
        var preemptive: Task<Transcription, any Error>?
        /// That transcription's result, when it had already arrived (a response was started on it).
        var finished: Transcription?
    }

    /// A response asked for while committed audio was still being transcribed.
    struct WaitingResponse: Sendable {
        var id: String
        var request: ResponseRequest
    }

    /// What the session does next.
    enum Action: Sendable {
        /// Transcribe the utterance (or await its early transcription), then call `finished(_:)`.
        case transcribe(Utterance)
        /// The utterance's transcript is already known: call `finished(_:)` and use it now,
        /// not after a task and a hop back, each a wait in the pool's queue.
        case takeTranscript(Utterance, Transcription)
        /// Every committed utterance is transcribed: start the response that waited for them;
        /// its latency counts from `committedAt`, the last one's commit.
        case startResponse(WaitingResponse, committedAt: Duration)
    }

    private var waiting: [Utterance] = []
    /// Whether an utterance handed out by `next()` has not finished yet.
    private var isTranscribing = false
    /// When the utterance finished last was committed.
    private var lastCommittedAt: Duration?
    /// The response waiting for the transcripts.
    private(set) var waitingResponse: WaitingResponse?

    /// Whether no utterance is waiting or being transcribed.
    var isIdle: Bool { !isTranscribing && waiting.isEmpty }

    /// Adds a committed utterance at the end of the queue.
    mutating func add(_ utterance: Utterance) {
        waiting.append(utterance)
    }

    /// What to do next; `nil` while an utterance is being transcribed or when nothing waits.
    mutating func next() -> Action? {
        guard !isTranscribing else { return nil }
        guard waiting.isEmpty else {
            let utterance = waiting.removeFirst()
            isTranscribing = true
            return utterance.finished.map { .takeTranscript(utterance, $0) } ?? .transcribe(utterance)
        }
        guard let response = waitingResponse, let committedAt = lastCommittedAt else { return nil }
        waitingResponse = nil
        return .startResponse(response, committedAt: committedAt)
    }

    /// The utterance handed out last has its transcript (or failed to get one).
    mutating func finished(_ utterance: Utterance) {
        isTranscribing = false
        lastCommittedAt = utterance.committedAt
    }

    /// Holds response `id` until every committed utterance is transcribed.
    /// - Returns: `false` (and nothing held) when none is waiting: the response can start now.
    mutating func holdResponse(id: String, request: ResponseRequest) -> Bool {
        guard !isIdle else { return false }
        waitingResponse = WaitingResponse(id: id, request: request)
        return true
    }

    /// Drops the waiting response (only when it is `id`, when given).
    /// - Returns: whether it did.
    mutating func dropWaitingResponse(id: String? = nil) -> Bool {
        guard let response = waitingResponse, id == nil || id == response.id else { return false }
        waitingResponse = nil
        return true
    }

    /// Drops every waiting utterance, cancelling their early transcriptions, and the waiting response.
    mutating func removeAll() {
        waiting.forEach { $0.preemptive?.cancel() }
        waiting.removeAll()
        waitingResponse = nil
    }
}
