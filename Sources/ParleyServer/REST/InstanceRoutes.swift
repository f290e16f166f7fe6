import Foundation
import ParleyCore
import ParleyNet
import ParleyStore

/// Agent instances (one conversation of an agent with one user) and their conversations.
enum InstanceRoutes {
    struct InstanceRequest: Decodable {
        var user: String?
        var conversationID: String?
        var ttlSeconds: Double?
        enum CodingKeys: String, CodingKey { case user, conversationID = "conversation_id", ttlSeconds = "ttl_seconds" }
    }

    struct InstanceResponse: Encodable {
        var id: String
        var object = "agent.instance"
        /// The agent holding the instance now (another than the original after a handoff).
        var agentID: String
        /// The agent the instance was made for.
        var originalAgentID: String?
        var user: String
        var conversationID: String
        var status: String
        var clientSecret: TokenRoutes.ClientSecret?
        var url: String?
        /// Cluster mode: the node serving the live session, and its URL.
        var ownerNode: String?
        var ownerURL: String?
        enum CodingKeys: String, CodingKey {
            case id, object, agentID = "agent_id", originalAgentID = "original_agent_id", user, conversationID = "conversation_id", status
            case clientSecret = "client_secret", url, ownerNode = "owner_node", ownerURL = "owner_url"
        }
    }

    struct ItemList: Encodable {
        struct Item: Encodable {
            var id: String
            var role: String
            var text: String
            var interrupted: Bool?
            var toolCalls: [ToolCall]?
            var callID: String?
            var createdAt: Int
            /// The agent that held the conversation when the item completed.
            var agentID: String?
            enum CodingKeys: String, CodingKey {
                case id, role, text, interrupted, toolCalls = "tool_calls", callID = "call_id", createdAt = "created_at", agentID = "agent_id"
            }
        }
        var object = "list"
        var data: [Item]
    }

    static func register(on router: inout Router, context: ServerContext) {
        router.post("/v1/agents/{id}/instances") { request in
            if let refusal = context.authentication.requireBackend(request) { return refusal }
            do {
                let agentID = request.pathParameters["id"] ?? ""
                guard try await context.store.agent(id: agentID) != nil else { return AgentRoutes.notFound(request) }
                let body = try request.jsonBody(InstanceRequest.self, allowEmpty: true)
                guard let user = body.user, !user.isEmpty, user.count <= 200 else { throw BadRequest("user: is required (1 to 200 characters)") }
                let conversationID = body.conversationID ?? IdentifierGenerator.make("conv")
                try await context.store.ensureConversation(id: conversationID, agentID: agentID)
                let instance = InstanceRecord(
                    id: IdentifierGenerator.make("inst"), agentID: agentID, userID: user,
                    conversationID: conversationID, status: "waiting", createdAt: Date()
                )
                try await context.store.saveInstance(instance)
                let minted = context.authentication.authority.mint(
                    subject: user, agentID: agentID, instanceID: instance.id,
                    lifetime: body.ttlSeconds ?? ClientTokenAuthority.defaultLifetime
                )
                let host = request.headers["Host"] ?? "\(context.settings.host):\(context.settings.port)"
                context.log.log("instance.created", ["instance": .string(instance.id), "agent": .string(agentID)])
                return JSONResponse.ok(InstanceResponse(
                    id: instance.id, agentID: agentID, user: user, conversationID: conversationID, status: "waiting",
                    clientSecret: TokenRoutes.ClientSecret(value: minted.token, expiresAt: minted.claims.expiresAt),
                    url: "ws://\(host)/v1/realtime?instance=\(instance.id)"
                ), status: 201)
            } catch let error as BadRequest {
                return error.response
            } catch {
                return AgentRoutes.storageFailure(error)
            }
        }

        router.get("/v1/instances/{id}") { request in
            if let refusal = context.authentication.requireBackend(request) { return refusal }
            do {
                guard let instance = try await context.store.instance(id: request.pathParameters["id"] ?? "") else { return AgentRoutes.notFound(request) }
                let view = try await context.coordinator.liveView(of: instance)
                var response = InstanceResponse(
                    id: instance.id, agentID: instance.currentAgentID ?? instance.agentID, originalAgentID: instance.agentID, user: instance.userID,
                    conversationID: instance.conversationID, status: view.status
                )
                response.ownerNode = view.ownerNode
                response.ownerURL = view.ownerURL
                return JSONResponse.ok(response)
            } catch {
                return AgentRoutes.storageFailure(error)
            }
        }

        router.post("/v1/instances/{id}/interrupt") { request in
            if let refusal = context.authentication.requireBackend(request) { return refusal }
            let id = request.pathParameters["id"] ?? ""
            do {
                guard try await context.coordinator.interrupt(instanceID: id) else {
                    return .error(status: 409, code: "not_connected", message: "Instance \(id) has no live session to interrupt.")
                }
                return JSONResponse.ok(["id": id, "object": "agent.instance.interrupted"])
            } catch let error as CoordinationError {
                return .error(status: 504, code: error.code, message: error.message)
            } catch {
                return AgentRoutes.storageFailure(error)
            }
        }

        router.delete("/v1/instances/{id}") { request in
            if let refusal = context.authentication.requireBackend(request) { return refusal }
            do {
                let id = request.pathParameters["id"] ?? ""
                guard try await context.coordinator.end(instanceID: id) else { return AgentRoutes.notFound(request) }
                return JSONResponse.ok(["id": id, "object": "agent.instance", "status": "ended"])
            } catch {
                return AgentRoutes.storageFailure(error)
            }
        }

        router.get("/v1/conversations/{id}/items") { request in
            if let refusal = context.authentication.requireBackend(request) { return refusal }
            do {
                let id = request.pathParameters["id"] ?? ""
                guard try await context.store.conversationExists(id: id) else { return AgentRoutes.notFound(request) }
                let items = try await context.store.items(conversationID: id).map(listItem)
                return JSONResponse.ok(ItemList(data: items))
            } catch {
                return AgentRoutes.storageFailure(error)
            }
        }
    }

    /// An item as the item list shows it, with the agent that spoke it.
    static func listItem(_ record: ItemRecord) -> ItemList.Item {
        var item = listItemContent(record)
        item.agentID = record.agentID
        return item
    }

    private static func listItemContent(_ record: ItemRecord) -> ItemList.Item {
        let createdAt = Int(record.createdAt.timeIntervalSince1970)
        switch record.message {
        case .system(let text):
            return .init(id: record.id, role: "system", text: text, createdAt: createdAt)
        case .user(let parts):
            let text = parts.compactMap { if case .text(let text) = $0 { text } else { nil } }.joined(separator: " ")
            return .init(id: record.id, role: "user", text: text, createdAt: createdAt)
        case .assistant(let text, let calls, let interrupted):
            return .init(id: record.id, role: "assistant", text: text, interrupted: interrupted ? true : nil,
                         toolCalls: calls.isEmpty ? nil : calls, createdAt: createdAt)
        case .tool(let callID, let content):
            return .init(id: record.id, role: "tool", text: content, callID: callID, createdAt: createdAt)
        }
    }
}
