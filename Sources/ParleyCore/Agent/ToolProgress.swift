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
    /// each call (`ToolProgress.$reporter.withValue(ToolProgressReporter { … })`).
    ///
    /// The value is a struct holding the closure, not an optional closure: with Swift 6.3 on
    /// Linux, `withValue` on a task-local of optional function type, specialised by the
    /// optimiser (`-c release`), dereferences a bad pointer in `swift_task_localValuePush` and
    /// crashes the process. `ToolchainDefectTests` keeps a 20-line reproduction.
    @TaskLocal public static var reporter: ToolProgressReporter?

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
        reporter.say(words)
    }
}

/// Receives the progress reports of the tool calls it is bound around (see `ToolProgress`).
public struct ToolProgressReporter: Sendable {
    /// Called with each report, already trimmed and cut to length.
    public let say: @Sendable (String) -> Void

    /// A reporter that hands each report to `say`.
    public init(_ say: @escaping @Sendable (String) -> Void) {
        self.say = say
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
