import Foundation
import ParleyCore

/// What a realtime client reports, in order, on `RealtimeClient.updates`.
public enum RealtimeClientUpdate: Sendable {
    /// An attempt to connect started (1 for the first).
    case connecting(attempt: Int)
    /// A session is open: the server sent `session.created` with these settings.
    case connected(RealtimeSessionInfo)
    /// A server event of the open session, with its `event_id` when the server sent one.
    case event(RealtimeServerEvent, eventID: String?)
    /// A message the client could not read (not JSON, a binary message, a malformed event);
    /// the session goes on.
    case unreadable(String)
    /// The session ended or could not start. `retryIn` is the wait before the next attempt,
    /// or `nil` when the client gave up (it then sends nothing more).
    case disconnected(RealtimeConnectionProblem, retryIn: Duration?)
}

/// Why a realtime session ended or could not start, in words a person can act on.
public enum RealtimeConnectionProblem: Sendable, Hashable, CustomStringConvertible {
    /// No token could be had from the token provider.
    case tokenUnavailable(String)
    /// The server refused the token (HTTP 401 or 403).
    case unauthorized(String)
    /// The server could not be reached, or refused the connection.
    case unreachable(String)
    /// The server accepted the connection but no session started in time, or it sent an
    /// error instead of `session.created`.
    case sessionNotStarted(String)
    /// An open session's connection closed.
    case connectionLost(closeCode: Int?)

    public var description: String {
        switch self {
        case .tokenUnavailable(let reason): "Could not get a token to connect: \(reason)"
        case .unauthorized(let reason): "The server did not accept the token: \(reason)"
        case .unreachable(let reason): "Can't reach the Parley server: \(reason)"
        case .sessionNotStarted(let reason): "The server did not start a session: \(reason)"
        case .connectionLost(let code?) where code == 1001: "The Parley server went away (it may be restarting)."
        case .connectionLost: "Lost the connection to the Parley server."
        }
    }
}
