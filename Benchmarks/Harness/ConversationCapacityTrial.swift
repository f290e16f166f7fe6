/// One trial of a conversation capacity search: `sessions` concurrent conversations of
/// `questionsPerSession` spoken questions each, the voice-to-voice latency of every question
/// answered, and the CPU the server used meanwhile.
///
/// It holds when every question was answered and the p90 latency is within `p90LimitMs`.
///
/// ```swift
/// let trial = ConversationCapacityTrial(sessions: 2, questionsPerSession: 3, latenciesMs: latencies,
///                                       p90LimitMs: 1_500, cpuSeconds: 30, elapsedSeconds: 60)
/// trial.held  // every one of the 6 questions answered and p90 ≤ 1.5 s
/// ```
public struct ConversationCapacityTrial: Sendable {
    /// Concurrent sessions.
    public var sessions: Int
    /// Questions each session asks.
    public var questionsPerSession: Int
    /// Last voiced sample sent → first reply audio received, in ms, of each question answered.
    public var latenciesMs: [Double]
    /// The largest p90 latency that holds, in ms.
    public var p90LimitMs: Double
    /// CPU seconds the server used during the trial.
    public var cpuSeconds: Double
    /// Seconds from the first session's start to the last one's end.
    public var elapsedSeconds: Double

    /// A trial's figures.
    public init(
        sessions: Int, questionsPerSession: Int, latenciesMs: [Double], p90LimitMs: Double,
        cpuSeconds: Double, elapsedSeconds: Double
    ) {
        self.sessions = sessions
        self.questionsPerSession = questionsPerSession
        self.latenciesMs = latenciesMs
        self.p90LimitMs = p90LimitMs
        self.cpuSeconds = cpuSeconds
        self.elapsedSeconds = elapsedSeconds
    }

    /// Every question the sessions were to ask.
    public var questionsAsked: Int { sessions * questionsPerSession }
    /// The questions answered.
    public var answered: Int { latenciesMs.count }
    /// The p50 latency of the questions answered, in ms (`nan` when none was).
    public var p50: Double { percentile(latenciesMs, 50) }
    /// The p90 latency of the questions answered, in ms (`nan` when none was).
    public var p90: Double { percentile(latenciesMs, 90) }

    /// Whether the server held the sessions: every question answered, p90 within the limit.
    public var held: Bool { answered == questionsAsked && p90 <= p90LimitMs }

    /// The CPU one session took, as a share of one core (0.25: a quarter of a core).
    public var cpuShareOfOneCorePerSession: Double {
        guard sessions > 0, elapsedSeconds > 0 else { return .nan }
        return cpuSeconds / elapsedSeconds / Double(sessions)
    }

    /// The questions session `session` (from 0) asks, as indices into `available` questions:
    /// `questionsPerSession` consecutive ones, each session starting where the one before it
    /// ended, so sessions ask different questions until the list runs out and then wrap.
    public static func questionIndices(session: Int, questionsPerSession: Int, available: Int) -> [Int] {
        guard available > 0 else { return [] }
        return (0..<questionsPerSession).map { (session * questionsPerSession + $0) % available }
    }
}
