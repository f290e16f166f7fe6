import Foundation

/// When a session transcribes the turn in progress for its partial transcripts
/// (`userTranscriptPartial`): every `partialTranscriptIntervalMs` of input, one pass at a time.
///
/// A value type: the session asks `isDue(atMs:intervalMs:)`, starts the pass and hands it over
/// (`started(_:)`), and reports its end (`passEnded()`).
struct PartialTranscripts {
    /// Input time of the last pass found due (or of the turn's start).
    private var lastPassAtMs = 0
    /// The pass running; it counts until it reports back, even when cancelled.
    private var pass: Task<Void, Never>?

    /// A turn began at input time `ms`: its first pass is due an interval later.
    mutating func turnStarted(atMs ms: Int) { lastPassAtMs = ms }

    /// Whether a pass is due at input time `nowMs`: one is every `intervalMs` (0: never) while
    /// none runs. When one is, the interval starts again from `nowMs`.
    mutating func isDue(atMs nowMs: Int, intervalMs: Int) -> Bool {
        guard intervalMs > 0, pass == nil, nowMs - lastPassAtMs >= intervalMs else { return false }
        lastPassAtMs = nowMs
        return true
    }

    /// Keeps the pass the session started.
    mutating func started(_ pass: Task<Void, Never>) { self.pass = pass }

    /// The pass reported back.
    mutating func passEnded() { pass = nil }

    /// Cancels the pass; it still counts as running until it reports back.
    func cancel() { pass?.cancel() }

    /// Cancels the pass and forgets it: the next may start at once (the turn was committed).
    mutating func drop() {
        pass?.cancel()
        pass = nil
    }
}
