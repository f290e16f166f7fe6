import Foundation
import ParleyCore
import ParleyNet
import ParleyStore

/// `POST/GET/PATCH/DELETE /v1/agents[/{id}]`: the agents a backend (or the operator console) defines.
enum AgentRoutes {
    struct AgentList: Encodable {
        var object = "list"
        var data: [AgentDefinition]
    }

    /// Registers the routes at `path` (the operator console has its own, `/v1/console/agents`),
    /// letting in whom `authorize` lets in (the server secret by default).
    static func register(
        on router: inout Router, context: ServerContext, at path: String = "/v1/agents",
        authorize: (@Sendable (HTTPRequest) -> HTTPResponse?)? = nil
    ) {
        let authorize = authorize ?? { [authentication = context.authentication] in authentication.requireBackend($0) }
        router.post(path) { request in
            if let refusal = authorize(request) { return refusal }
            do {
                var definition = try request.jsonBody(AgentDefinition.self)
                try check(definition)
                try await checkHandoffTargets(of: definition, context: context)
                let now = Date()
                definition.id = IdentifierGenerator.make("agent")
                definition.createdAt = Int(now.timeIntervalSince1970)
                definition.updatedAt = definition.createdAt
                try await save(definition, context: context, createdAt: now)
                context.log.log("agent.created", ["agent": .string(definition.id!)])
                return JSONResponse.ok(definition.redacted, status: 201)
            } catch let error as BadRequest {
                return error.response
            } catch {
                return storageFailure(error)
            }
        }

        router.get(path) { request in
            if let refusal = authorize(request) { return refusal }
            do {
                let agents = try await context.store.agents().map { try decode($0).redacted }
                return JSONResponse.ok(AgentList(data: agents))
            } catch {
                return storageFailure(error)
            }
        }

        router.get(path + "/{id}") { request in
            if let refusal = authorize(request) { return refusal }
            do {
                guard let record = try await context.store.agent(id: request.pathParameters["id"] ?? "") else { return notFound(request) }
                return JSONResponse.ok(try decode(record).redacted)
            } catch {
                return storageFailure(error)
            }
        }

        router.patch(path + "/{id}") { request in
            if let refusal = authorize(request) { return refusal }
            do {
                guard let record = try await context.store.agent(id: request.pathParameters["id"] ?? "") else { return notFound(request) }
                var definition = try decode(record)
                let patch = try request.jsonBody(AgentDefinition.self)
                definition.merge(patch)
                try check(definition)
                try await checkHandoffTargets(of: definition, context: context)
                definition.updatedAt = Int(Date().timeIntervalSince1970)
                try await save(definition, context: context, createdAt: record.createdAt)
                return JSONResponse.ok(definition.redacted)
            } catch let error as BadRequest {
                return error.response
            } catch {
                return storageFailure(error)
            }
        }

        router.delete(path + "/{id}") { request in
            if let refusal = authorize(request) { return refusal }
            do {
                let id = request.pathParameters["id"] ?? ""
                guard try await context.store.deleteAgent(id: id) else { return notFound(request) }
                return JSONResponse.ok(["id": id, "object": "agent.deleted", "deleted": "true"])
            } catch {
                return storageFailure(error)
            }
        }
    }

    /// The stored definition of an agent.
    static func decode(_ record: AgentRecord) throws -> AgentDefinition {
        try JSONDecoder().decode(AgentDefinition.self, from: Data(record.document.jsonText.utf8))
    }

    private static func check(_ definition: AgentDefinition) throws(BadRequest) {
        let problems = definition.validationProblems()
        guard problems.isEmpty else { throw BadRequest(problems.joined(separator: "; ")) }
    }

    /// Refuses handoffs to agents that do not exist (a target deleted later is refused when the
    /// handoff is tried).
    private static func checkHandoffTargets(of definition: AgentDefinition, context: ServerContext) async throws {
        var problems: [String] = []
        for (index, handoff) in (definition.handoffs ?? []).enumerated() where try await context.store.agent(id: handoff.agentID) == nil {
            problems.append("handoffs[\(index)].agent_id: no agent \"\(handoff.agentID)\"")
        }
        guard problems.isEmpty else { throw BadRequest(problems.joined(separator: "; ")) }
    }

    private static func save(_ definition: AgentDefinition, context: ServerContext, createdAt: Date) async throws {
        let document = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(definition))
        try await context.store.saveAgent(AgentRecord(id: definition.id!, document: document, createdAt: createdAt, updatedAt: Date()))
    }

    static func notFound(_ request: HTTPRequest) -> HTTPResponse {
        .error(status: 404, code: "not_found", message: "No such resource: \(request.path)")
    }

    static func storageFailure(_ error: any Error) -> HTTPResponse {
        .error(status: 500, code: "storage_error", message: "The server could not read or write its database.")
    }
}
