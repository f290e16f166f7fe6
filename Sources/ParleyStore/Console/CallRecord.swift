import Foundation

/// One session of a conversation as the operator console lists it: who called through which
/// door, on which node, when, for how long, and how it went. A call is written when its
/// session is admitted and again when it ends; a call without an end is live (or its node died).
public struct CallRecord: Sendable, Hashable, Codable {
    /// The session's id (`sess_…`).
    public var id: String
    public var conversationID: String
    /// The agent of the conversation, when it has one (read from the conversation).
    public var agentID: String?
    /// The user the session counts against; `nil` for the backend's own sessions.
    public var userID: String?
    /// The door it came through: `websocket`, `webrtc`, `twilio`, `sip`.
    public var door: String
    /// The node that served it.
    public var nodeID: String
    public var startedAt: Date
    /// When it ended; `nil` while live.
    public var endedAt: Date?
    /// Errors the session reported.
    public var errorCount: Int
    /// Responses the agent gave.
    public var turnCount: Int

    /// Creates a call record.
    public init(
        id: String, conversationID: String, agentID: String? = nil, userID: String?, door: String, nodeID: String,
        startedAt: Date, endedAt: Date? = nil, errorCount: Int = 0, turnCount: Int = 0
    ) {
        self.id = id
        self.conversationID = conversationID
        self.agentID = agentID
        self.userID = userID
        self.door = door
        self.nodeID = nodeID
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.errorCount = errorCount
        self.turnCount = turnCount
    }

    /// Seconds from start to end (to `now` while live).
    public func durationSeconds(now: Date = Date()) -> Double {
        (endedAt ?? now).timeIntervalSince(startedAt)
    }
}

/// Which calls to list, newest first, one page at a time. Every filter is optional.
public struct CallQuery: Sendable, Hashable {
    /// Words to find in the call's id, conversation id, agent id or user id.
    public var search: String?
    /// Words that must all be found in what was said in the call's conversation (each as the
    /// start of a word said: `bill` finds "billing"); see `ItemRecord.words(of:)`.
    public var transcriptWords: [String]
    public var agentID: String?
    public var userID: String?
    public var door: String?
    /// Calls that started at or after this time.
    public var startedFrom: Date?
    /// Calls that started before this time.
    public var startedBefore: Date?
    /// Calls that lasted at least this many seconds (live calls count up to now).
    public var minimumSeconds: Double?
    /// Only calls with errors (`true`) or without (`false`).
    public var hasErrors: Bool?
    /// Only live calls (`true`) or ended ones (`false`).
    public var isLive: Bool?
    /// The page's size.
    public var limit: Int
    /// The cursor of the page before (`CallPage.nextCursor`): the calls after it.
    public var after: CallCursor?

    /// Creates a query for the newest `limit` calls matching the filters.
    public init(
        search: String? = nil, transcriptWords: [String] = [], agentID: String? = nil, userID: String? = nil, door: String? = nil, startedFrom: Date? = nil,
        startedBefore: Date? = nil, minimumSeconds: Double? = nil, hasErrors: Bool? = nil, isLive: Bool? = nil,
        limit: Int = 50, after: CallCursor? = nil
    ) {
        self.search = search
        self.transcriptWords = transcriptWords
        self.agentID = agentID
        self.userID = userID
        self.door = door
        self.startedFrom = startedFrom
        self.startedBefore = startedBefore
        self.minimumSeconds = minimumSeconds
        self.hasErrors = hasErrors
        self.isLive = isLive
        self.limit = limit
        self.after = after
    }
}

/// Where a page of calls ended: the start time and id of its last call (keyset paging, so a
/// page costs the same however deep it is).
public struct CallCursor: Sendable, Hashable {
    public var startedAt: Double
    public var id: String

    /// Creates a cursor after the call `id` that started at `startedAt` (seconds since 1970).
    public init(startedAt: Double, id: String) {
        self.startedAt = startedAt
        self.id = id
    }

    /// The cursor as one opaque string for a URL (`<seconds>_<id>`).
    public var text: String { "\(startedAt)_\(id)" }

    /// Reads a cursor written by `text`; `nil` when it is not one.
    public init?(text: String) {
        guard let separator = text.firstIndex(of: "_"), let seconds = Double(text[..<separator]), seconds.isFinite else { return nil }
        let id = String(text[text.index(after: separator)...])
        guard !id.isEmpty else { return nil }
        self.init(startedAt: seconds, id: id)
    }
}

/// A page of calls and the cursor of the next one (`nil` on the last page).
public struct CallPage: Sendable, Hashable {
    public var calls: [CallRecord]
    public var nextCursor: CallCursor?

    /// Creates a page.
    public init(calls: [CallRecord], nextCursor: CallCursor?) {
        self.calls = calls
        self.nextCursor = nextCursor
    }
}
