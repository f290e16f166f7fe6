import Foundation
import ParleyCore
import ParleyStore

/// The realtime sessions running now, by id and by instance, with the concurrency limits: the
/// node's, and each user's and each client token's.
///
/// `@unchecked Sendable`: `sessions`, `statuses`, `activities`, `sessionIDs`,
/// `stateObservers` and `nextObserver` are guarded by `lock`.
public final class LiveSessions: @unchecked Sendable {
    /// How many sessions may run at once.
    public struct Limits: Sendable, Hashable {
        /// On this node.
        public var maximum: Int
        /// Of one user (a client token's subject), on every door together.
        public var perUser: Int
        /// Of one client token.
        public var perToken: Int

        /// Limits of `maximum` sessions, `perUser` per user and `perToken` per token.
        public init(maximum: Int, perUser: Int = 10, perToken: Int = 5) {
            self.maximum = maximum
            self.perUser = perUser
            self.perToken = perToken
        }
    }

    /// Whom a session counts against (`nil` for the backend, which holds the server secret).
    public typealias Owner = SessionOwner

    /// Why a session was not admitted.
    public enum Refusal: Error, Sendable, Equatable {
        case serverFull(maximum: Int)
        case clusterFull(maximum: Int)
        case userLimit(maximum: Int)
        case tokenLimit(maximum: Int)

        /// The error code a door reports.
        public var code: String {
            switch self {
            case .serverFull, .clusterFull: "too_many_sessions"
            case .userLimit: "too_many_sessions_for_user"
            case .tokenLimit: "too_many_sessions_for_token"
            }
        }

        /// The HTTP status a door answers with: 503 when the server is full, 429 for a caller's own limit.
        public var httpStatus: Int {
            switch self {
            case .serverFull, .clusterFull: 503
            case .userLimit, .tokenLimit: 429
            }
        }

        /// The sentence a caller reads.
        public var message: String {
            switch self {
            case .serverFull(let maximum): "The server is at its limit of \(maximum) sessions; try again shortly."
            case .clusterFull(let maximum): "The cluster is at its limit of \(maximum) sessions; try again shortly."
            case .userLimit(let maximum): "This user already has \(maximum) sessions open, the most allowed at once; end one first."
            case .tokenLimit(let maximum): "This client token already has \(maximum) sessions open, the most allowed at once; end one first."
            }
        }
    }

    /// One running session.
    public struct Entry: Sendable {
        public var sessionID: String
        public var instanceID: String?
        public var session: VoiceSession
        /// Closes the client's socket.
        public var disconnect: @Sendable () -> Void
        /// The conversation the session speaks in.
        public var conversationID: String?
        /// The epoch of the session's instance claim, in cluster mode.
        public var claimEpoch: Int64? = nil
        /// Whom the session counts against, beyond the node's limit.
        public var owner: Owner? = nil
        /// The door it came through (`websocket`, `webrtc`, `twilio`, `sip`).
        public var door: String = ""
        /// When it was admitted.
        public var startedAt = Date()
    }

    /// What a running session is doing, and what it did so far, for the operator console.
    public struct Activity: Sendable, Hashable {
        /// `listening`, `thinking`, `speaking` or `tool_running`.
        public var state = "listening"
        /// Responses the agent gave.
        public var turns = 0
        /// Errors the session reported.
        public var errors = 0
    }

    private let lock = NSLock()
    private var sessions: [String: Entry] = [:]
    private var statuses: [String: String] = [:]
    private var activities: [String: Activity] = [:]
    /// The id each running `VoiceSession` was admitted under.
    private var sessionIDs: [ObjectIdentifier: String] = [:]
    /// Told whenever a session starts, ends or changes its state, by `observeStates`' token.
    private var stateObservers: [Int: @Sendable () -> Void] = [:]
    private var nextObserver = 0
    /// The limits sessions are admitted under.
    public let limits: Limits
    /// The most sessions at once on this node.
    public var maximum: Int { limits.maximum }

    /// Creates a registry admitting sessions under `limits`.
    public init(limits: Limits) { self.limits = limits }

    /// Registers a session, unless a limit is reached (then nothing is registered).
    /// - Returns: nil when admitted, else the limit that refused it.
    public func admit(_ entry: Entry) -> Refusal? {
        let (refusal, observers) = lock.withLock { () -> (Refusal?, [@Sendable () -> Void]) in
            if let refusal = refusalLocked(for: entry.owner) { return (refusal, []) }
            sessions[entry.sessionID] = entry
            activities[entry.sessionID] = Activity()
            sessionIDs[ObjectIdentifier(entry.session)] = entry.sessionID
            if let instance = entry.instanceID { statuses[instance] = "listening" }
            return (nil, Array(stateObservers.values))
        }
        observers.forEach { $0() }
        return refusal
    }

    /// The limit a new session of `owner` would break now, if any (a door asks before it does
    /// the work of setting a session up; `admit` decides).
    public func refusal(for owner: Owner?) -> Refusal? {
        lock.withLock { refusalLocked(for: owner) }
    }

    private func refusalLocked(for owner: Owner?) -> Refusal? {
        guard sessions.count < limits.maximum else { return .serverFull(maximum: limits.maximum) }
        guard let owner else { return nil }
        var ofUser = 0
        var ofToken = 0
        for entry in sessions.values {
            guard let other = entry.owner else { continue }
            if other.user == owner.user { ofUser += 1 }
            if other.tokenID == owner.tokenID { ofToken += 1 }
        }
        if ofToken >= limits.perToken { return .tokenLimit(maximum: limits.perToken) }
        if ofUser >= limits.perUser { return .userLimit(maximum: limits.perUser) }
        return nil
    }

    /// Removes a session; returns what it did, when it was running.
    @discardableResult
    public func remove(sessionID: String) -> Activity? {
        let (activity, observers) = lock.withLock { () -> (Activity?, [@Sendable () -> Void]) in
            guard let entry = sessions.removeValue(forKey: sessionID) else { return (nil, []) }
            if let instance = entry.instanceID { statuses[instance] = nil }
            sessionIDs[ObjectIdentifier(entry.session)] = nil
            return (activities.removeValue(forKey: sessionID), Array(stateObservers.values))
        }
        observers.forEach { $0() }
        return activity
    }

    /// Changes what the running `session` is doing (`listening`, `thinking`, `speaking`, `tool_running`).
    public func setState(_ state: String, of session: VoiceSession) {
        updateActivity(of: session) { $0.state = state }
        lock.withLock { Array(stateObservers.values) }.forEach { $0() }
    }

    /// Has `observer` told (on the caller's thread, outside the lock) whenever a session
    /// starts, ends or changes its state, until `stopObserving` with the token returned.
    public func observeStates(_ observer: @escaping @Sendable () -> Void) -> Int {
        lock.withLock {
            nextObserver += 1
            stateObservers[nextObserver] = observer
            return nextObserver
        }
    }

    /// Stops telling the observer `observeStates` returned `token` for.
    public func stopObserving(_ token: Int) {
        lock.withLock { stateObservers[token] = nil }
    }

    /// What each running session is doing, by session id.
    public var states: [String: String] {
        lock.withLock { sessions.keys.reduce(into: [:]) { $0[$1] = activities[$1]?.state ?? Activity().state } }
    }

    /// Counts a response `session` gave.
    public func countTurn(of session: VoiceSession) {
        updateActivity(of: session) { $0.turns += 1 }
    }

    /// Counts an error `session` reported.
    public func countError(of session: VoiceSession) {
        updateActivity(of: session) { $0.errors += 1 }
    }

    private func updateActivity(of session: VoiceSession, _ update: (inout Activity) -> Void) {
        lock.withLock {
            guard let sessionID = sessionIDs[ObjectIdentifier(session)] else { return }
            update(&activities[sessionID, default: Activity()])
        }
    }

    /// The running session `sessionID`.
    public func entry(sessionID: String) -> Entry? { lock.withLock { sessions[sessionID] } }

    /// Every running session with what it is doing, oldest first.
    public var allWithActivity: [(entry: Entry, activity: Activity)] {
        lock.withLock {
            sessions.values.sorted { ($0.startedAt, $0.sessionID) < ($1.startedAt, $1.sessionID) }
                .map { ($0, activities[$0.sessionID] ?? Activity()) }
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

extension SessionOwner {
    /// The owner a client token's claims name.
    public init(_ claims: ClientTokenClaims) {
        self.init(user: claims.subject, tokenID: claims.tokenID)
    }

    /// The owner of a caller's sessions: nil for the backend.
    public init?(_ caller: Caller) {
        guard case .client(let claims) = caller else { return nil }
        self.init(claims)
    }
}
