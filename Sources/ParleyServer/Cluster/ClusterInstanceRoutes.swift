import Foundation
import ParleyNet
import ParleyStore

/// The instance routes in cluster mode: any node answers, the database says which node owns
/// the instance's live session, and commands reach that node through the cluster's outbox.
/// The route answers once the owner acted.
enum ClusterInstanceRoutes {
    /// `GET /v1/instances/{id}`: the status and owner the database holds; the owner itself
    /// reports its live status (`listening`, `thinking`, `speaking`).
    static func show(_ instance: InstanceRecord, cluster: PostgresCluster, context: ServerContext) async throws -> HTTPResponse {
        let ownership = try await cluster.ownership(instanceID: instance.id)
        var status = ownership?.status ?? instance.status
        if status == "live", ownership?.ownerNode == cluster.nodeID, let live = context.sessions.status(instanceID: instance.id) { status = live }
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
            case .notConnected: return notConnected
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
