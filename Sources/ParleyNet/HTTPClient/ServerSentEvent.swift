import Foundation

/// One event of a Server-Sent Events stream (`text/event-stream`).
public struct ServerSentEvent: Sendable, Hashable {
    /// The event type; `message` when the stream named none.
    public var type: String
    /// The event's data: its `data:` lines joined with `\n`.
    public var data: String
    /// The last event id seen in the stream so far, if any.
    public var lastEventID: String?

    /// Creates an event.
    public init(type: String = "message", data: String, lastEventID: String? = nil) {
        self.type = type
        self.data = data
        self.lastEventID = lastEventID
    }
}
