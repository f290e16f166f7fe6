import Foundation
import ParleyCore

/// The realtime sessions running now, by id and by instance, with the concurrency limit.
///
/// `@unchecked Sendable`: `sessions` is guarded by `lock`.
public final class LiveSessions: @unchecked Sendable {
    /// One running session.
    public struct Entry: Sendable {
        public var sessionID: String
        public var instanceID: String?
        public var session: VoiceSession
        /// Closes the client's socket.
        public var disconnect: @Sendable () -> Void
        /// The conversation the session speaks in.
        public var conversationID: String?
    }

    private let lock = NSLock()
    private var sessions: [String: Entry] = [:]
    private var statuses: [String: String] = [:]
    /// The most sessions at once.
    public let maximum: Int

    /// Creates a registry admitting at most `maximum` sessions.
    public init(maximum: Int) { self.maximum = maximum }

    /// Registers a session; `false` when the limit is reached (nothing registered).
    public func admit(_ entry: Entry) -> Bool {
        lock.withLock {
            guard sessions.count < maximum else { return false }
            sessions[entry.sessionID] = entry
            if let instance = entry.instanceID { statuses[instance] = "listening" }
            return true
        }
    }

    /// Removes a session.
    public func remove(sessionID: String) {
        lock.withLock {
            if let instance = sessions.removeValue(forKey: sessionID)?.instanceID { statuses[instance] = nil }
        }
    }

    /// The session serving an instance.
    public func entry(instanceID: String) -> Entry? {
        lock.withLock { sessions.values.first { $0.instanceID == instanceID } }
    }

    /// Records the live status of an instance (`listening`, `thinking`, `speaking`).
    public func setStatus(_ status: String, instanceID: String) {
        lock.withLock { if statuses[instanceID] != nil { statuses[instanceID] = status } }
    }

    /// The live status of an instance, `nil` when it is not connected.
    public func status(instanceID: String) -> String? { lock.withLock { statuses[instanceID] } }

    /// Sessions running now.
    public var count: Int { lock.withLock { sessions.count } }

    /// Every running session.
    public var all: [Entry] { lock.withLock { Array(sessions.values) } }
}
