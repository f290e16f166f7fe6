import Foundation

/// A node's hold on an instance: it serves the instance's live session until another claim
/// raises the epoch; its item writes are refused from then on.
public struct InstanceClaim: Sendable, Hashable {
    public var instanceID: String
    /// Raised by one on every claim of the instance.
    public var epoch: Int64
    /// The node that held the instance live before this claim, if any.
    public var previousOwner: String?

    /// Creates a claim.
    public init(instanceID: String, epoch: Int64, previousOwner: String?) {
        self.instanceID = instanceID
        self.epoch = epoch
        self.previousOwner = previousOwner
    }
}

/// Where an instance lives in the cluster, as the database says.
public struct InstanceOwnership: Sendable, Hashable {
    /// `waiting`, `live`, `lost` or `ended`.
    public var status: String
    /// The node serving its live session (`nil` unless `live`).
    public var ownerNode: String?
    /// That node's internal URL.
    public var ownerURL: String?
    public var epoch: Int64
}

/// A command for the node that owns an instance, carried by the outbox table and NOTIFY.
public struct ClusterCommand: Sendable, Hashable {
    /// What the owner is asked to do.
    public enum Kind: String, Sendable {
        /// Cancel the response in progress (`POST /v1/instances/{id}/interrupt`).
        case interrupt
        /// Close the session and its socket: the instance ended (`DELETE /v1/instances/{id}`).
        case end
        /// Close the session if its claim is older than `epoch`: another connection took the instance over.
        case release
        /// Report the live session's status (`listening`, `thinking`, `speaking`): `GET /v1/instances/{id}` on another node.
        case status
        /// End the sessions of a conversation and remove its recording, on whichever node they
        /// are (`DELETE /v1/conversations/{id}`); sent to every live node, with `instanceID`
        /// carrying the conversation's id.
        case endConversation = "end_conversation"
        /// Cancel the response in progress of one session (the operator console), with
        /// `instanceID` carrying the session's id.
        case interruptSession = "interrupt_session"
        /// Close one session (the operator console), with `instanceID` carrying the session's id.
        case endSession = "end_session"
    }

    public var id: String
    public var kind: Kind
    /// The instance the command is about (for `endConversation`, the conversation).
    public var instanceID: String
    /// The claim the command is about (for `release`, the new one).
    public var epoch: Int64
}

/// What the owner reports after acting on a command.
public enum ClusterCommandOutcome: Sendable, Hashable {
    /// The command was carried out.
    case done
    /// The node has no live session for the instance.
    case notConnected
    /// The live session's status, answering `status`.
    case status(String)

    /// The outcome as an acknowledgement carries it and `commands.result` stores it.
    var wireValue: String {
        switch self {
        case .done: "done"
        case .notConnected: "not_connected"
        case .status(let status): "status=" + status
        }
    }

    /// Reads an acknowledged outcome; `nil` for text no owner sends.
    init?(wireValue: String) {
        switch wireValue {
        case "done": self = .done
        case "not_connected": self = .notConnected
        case let text where text.hasPrefix("status="): self = .status(String(text.dropFirst("status=".count)))
        default: return nil
        }
    }
}

/// A cluster operation that could not be carried out.
public struct ClusterError: Error, Sendable, CustomStringConvertible {
    /// Why, as a stable code.
    public enum Code: String, Sendable {
        /// The instance was claimed by a newer connection; this node may no longer write for it.
        case staleOwner = "stale_owner"
        /// The owning node did not acknowledge a command in time.
        case ownerUnreachable = "owner_unreachable"
        /// The cluster is shutting down.
        case stopped
    }

    public var code: Code
    public var message: String

    public var description: String { message }
}

/// Whom a session counts against, on a node and across the cluster: a client token's user and
/// token id, or a phone call's calling number and call.
public struct SessionOwner: Sendable, Hashable {
    public var user: String
    public var tokenID: String

    /// An owner named by `user` and `tokenID`.
    public init(user: String, tokenID: String) {
        self.user = user
        self.tokenID = tokenID
    }
}

/// The limits a session is admitted under across the cluster.
public struct ClusterSessionLimits: Sendable, Hashable {
    /// Sessions on every live node together; `nil` for no cluster-wide maximum.
    public var maximum: Int?
    /// Sessions of one user, on every node.
    public var perUser: Int
    /// Sessions of one client token, on every node.
    public var perToken: Int

    public init(maximum: Int?, perUser: Int, perToken: Int) {
        self.maximum = maximum
        self.perUser = perUser
        self.perToken = perToken
    }
}

/// Whether the cluster admitted a session, and if not, which limit refused it.
public enum ClusterAdmission: Sendable, Hashable {
    case admitted
    case clusterFull(maximum: Int)
    case userLimit(maximum: Int)
    case tokenLimit(maximum: Int)
}

/// A node of the cluster: its id and the URL it is reached at inside the cluster.
public struct ClusterNode: Sendable, Hashable {
    public var id: String
    public var url: String

    public init(id: String, url: String) {
        self.id = id
        self.url = url
    }
}
