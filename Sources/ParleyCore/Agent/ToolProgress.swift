import Foundation

/// Lets a running tool say how it is getting on ("Still searching flights…"), for the agent
/// to speak while the user waits.
///
/// The agent binds a reporter around each tool call; a report made outside a call goes nowhere.
/// The agent says a report only once the step's tools have run longer than the filler delay,
/// at most one per delay, and never the same words twice in a row — so quick tools stay silent
/// and long ones are not chatty.
///
/// ```swift
/// func call(arguments: JSONValue) async throws -> String {
///     ToolProgress.report("Still searching flights.")
///     return try await search(arguments)
/// }
/// ```
public enum ToolProgress {
    /// Where the reports of the tool call running in this task go; the agent binds it around
    /// each call (`ToolProgress.$reporter.withValue(…)`).
    @TaskLocal public static var reporter: (@Sendable (String) -> Void)?

    /// The longest report said; longer ones are cut at a word.
    static let maximumCharacters = 200

    /// Reports progress of the tool call running in the current task.
    public static func report(_ message: String) {
        var words = message.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !words.isEmpty, let reporter else { return }
        if words.count > maximumCharacters {
            let cut = words.prefix(maximumCharacters)
            words = String(cut.lastIndex(of: " ").map { cut[..<$0] } ?? cut)
        }
        reporter(words)
    }
}

/// Decides which progress reports of one step's tools are said aloud (see `ToolProgress`).
final class ToolProgressGate: @unchecked Sendable {  // `lock` guards every stored property.
    private let lock = NSLock()
    private let started: ContinuousClock.Instant
    private let interval: Duration
    private let waitsForFiller: Bool
    private var lastSaid: ContinuousClock.Instant?
    private var lastWords: String?

    /// A gate for a step whose tools started now; `interval` is the filler delay. When the step
    /// says the filler, reports wait for it (`noteSaid()`).
    init(interval: Duration, waitsForFiller: Bool) {
        started = ContinuousClock.now
        self.interval = interval
        self.waitsForFiller = waitsForFiller
    }

    /// Notes that something was said for the step (the filler), which a report must not follow closely.
    func noteSaid() {
        lock.withLock { lastSaid = ContinuousClock.now }
    }

    /// Whether `words` should be said now; when so, counts it as said.
    func admits(_ words: String) -> Bool {
        let now = ContinuousClock.now
        return lock.withLock {
            guard now - started >= interval, words != lastWords, !waitsForFiller || lastSaid != nil else { return false }
            if let lastSaid, now - lastSaid < interval { return false }
            lastSaid = now
            lastWords = words
            return true
        }
    }
}
