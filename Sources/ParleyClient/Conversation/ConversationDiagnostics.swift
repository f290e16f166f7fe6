import ParleyCore

/// Counters and last values for a debug screen and for tests: what was sent and received,
/// what the server acknowledged.
public struct ConversationDiagnostics: Sendable, Hashable {
    /// The current realtime session's id.
    public var sessionID: String?
    /// Sessions opened so far (more than one after a reconnect).
    public var sessionsOpened = 0
    /// Server events received, by type (GA names; `parley.*` as sent).
    public var receivedEvents: [String: Int] = [:]
    /// Client events sent, by type.
    public var sentEvents: [String: Int] = [:]
    /// Server events dropped because their `event_id` had already arrived.
    public var duplicateEvents = 0
    /// Messages that could not be read.
    public var unreadableMessages = 0
    /// The last truncation the server confirmed: the item and how much of its audio was kept.
    public var lastTruncation: PlaybackPosition?
    /// The status of the last finished response.
    public var lastResponseStatus: RealtimeResponseStatus?
    /// The last `parley.turn_metrics` payload (latency figures of a turn).
    public var lastTurnMetrics: JSONValue?

    /// Creates empty diagnostics.
    public init() {}
}
