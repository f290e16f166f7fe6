import Foundation
import ParleyNet
import ParleyStore

/// The instance routes in cluster mode: any node answers, the database says which node owns
/// the instance's live session, and commands reach that node through the cluster's outbox.
/// The route answers once the owner acted.
enum ClusterInstanceRoutes {
    /// How long `GET /v1/instances/{id}` waits for the owner's live status.
    static let statusTimeout = Duration.seconds(1)

    /// `GET /v1/instances/{id}`: the status and owner the database holds; while the instance
    /// is live, its owner reports the session's status (`listening`, `thinking`, `speaking`) —
    /// this node at once, another through a `status` command — so every node shows the same.
    /// An owner that does not answer within `statusTimeout` leaves the database's `live`.
    static func show(_ instance: InstanceRecord, cluster: PostgresCluster) async throws -> HTTPResponse {
        let ownership = try await cluster.ownership(instanceID: instance.id)
        var status = ownership?.status ?? instance.status
        if status == "live", let ownership, let owner = ownership.ownerNode,
           case .status(let live)? = try? await cluster.send(.status, instanceID: instance.id, epoch: ownership.epoch, to: owner, timeout: statusTimeout) {
            status = live
        }
        var response = InstanceRoutes.InstanceResponse(
            id: instance.id, agentID: instance.agentID, user: instance.userID, conversationID: instance.conversationID, status: status
        )
        response.ownerNode = ownership?.ownerNode
        response.ownerURL = ownership?.ownerURL
        return JSONResponse.ok(response)
    }

    /// `POST /v1/instances/{id}/interrupt`: the owner cancels the response in progress.
    static func interrupt(_ id: String, cluster: PostgresCluster) async -> HTTPResponse {
        let notConnected = HTTPResponse.error(status: 409, code: "not_connected", message: "Instance \(id) has no live session to interrupt.")
        do {
            guard let ownership = try await cluster.ownership(instanceID: id) else { return notConnected }
            guard ownership.status == "live", let owner = ownership.ownerNode else { return notConnected }
            switch try await cluster.send(.interrupt, instanceID: id, epoch: ownership.epoch, to: owner) {
            case .done: return JSONResponse.ok(["id": id, "object": "agent.instance.interrupted"])
            case .notConnected, .status: return notConnected
            }
        } catch let error as ClusterError {
            return unreachable(error)
        } catch {
            return AgentRoutes.storageFailure(error)
        }
    }

    /// `DELETE /v1/instances/{id}`: the owner closes the session and its socket, then the
    /// instance is ended. An owner that does not answer is fenced off: its writes are refused.
    static func delete(_ id: String, cluster: PostgresCluster) async -> HTTPResponse {
        do {
            guard let ownership = try await cluster.ownership(instanceID: id) else { return notFound(id) }
            var ownerActed = true
            if ownership.status == "live", let owner = ownership.ownerNode {
                do {
                    _ = try await cluster.send(.end, instanceID: id, epoch: ownership.epoch, to: owner)
                } catch is ClusterError {
                    ownerActed = false
                }
            }
            try await cluster.end(instanceID: id, fencingOwner: !ownerActed)
            return JSONResponse.ok(["id": id, "object": "agent.instance", "status": "ended"])
        } catch {
            return AgentRoutes.storageFailure(error)
        }
    }

    private static func notFound(_ id: String) -> HTTPResponse {
        .error(status: 404, code: "not_found", message: "No such resource: /v1/instances/\(id)")
    }

    private static func unreachable(_ error: ClusterError) -> HTTPResponse {
        .error(status: 504, code: error.code.rawValue, message: error.message)
    }
}
