import Foundation
import ParleyCore
import ParleyNet
import ParleyStore

/// `/v1/console/…`: the operator console's API (`docs/console.md`) — live sessions on every
/// node and door, interrupting or ending one, stored calls, one conversation with its turns'
/// figures and recording, latency percentiles, and agents. Only the server secret or a console
/// token (`ConsoleToken`) opens it; a client token gets 403. `/console` is its page.
enum ConsoleRoutes {
    static func register(on router: inout Router, context: ServerContext) {
        let authorize: @Sendable (HTTPRequest) -> HTTPResponse? = { [authentication = context.authentication] in
            authentication.requireOperator($0)
        }

        router.get("/console") { _ in
            var response = HTTPResponse(status: 302, headers: ["Location": "/console.html"], body: .data(Data()))
            response.headers.set("Cache-Control", "no-store")
            return response
        }

        router.get("/v1/console/sessions") { request in
            if let refusal = authorize(request) { return refusal }
            do {
                return JSONResponse.ok(ConsoleViews.List(data: try await liveSessions(context: context)))
            } catch {
                return AgentRoutes.storageFailure(error)
            }
        }

        router.get("/v1/console/sessions/events") { request in
            if let refusal = authorize(request) { return refusal }
            return .serverSentEvents(ConsoleLiveEvents.stream(context: context))
        }

        router.post("/v1/console/sessions/{id}/interrupt") { request in
            if let refusal = authorize(request) { return refusal }
            return await command(request, context: context, object: "console.session.interrupted") { id, node in
                try await context.coordinator.interrupt(sessionID: id, on: node)
            }
        }

        router.post("/v1/console/sessions/{id}/end") { request in
            if let refusal = authorize(request) { return refusal }
            return await command(request, context: context, object: "console.session.ended") { id, node in
                try await context.coordinator.end(sessionID: id, on: node)
            }
        }

        router.get("/v1/console/calls") { request in
            if let refusal = authorize(request) { return refusal }
            do throws(BadRequest) {
                let query = try ConsoleCallFilter.query(from: request.query)
                do {
                    let page = try await context.store.calls(query)
                    let now = Date()
                    return JSONResponse.ok(ConsoleViews.List(data: page.calls.map { ConsoleViews.Call($0, now: now) }, nextCursor: page.nextCursor?.text))
                } catch {
                    return AgentRoutes.storageFailure(error)
                }
            } catch {
                return error.response
            }
        }

        router.get("/v1/console/conversations/{id}") { request in
            if let refusal = authorize(request) { return refusal }
            let id = request.pathParameters["id"] ?? ""
            do {
                guard try await context.store.conversationExists(id: id) else { return AgentRoutes.notFound(request) }
                return JSONResponse.ok(try await conversation(id, context: context))
            } catch {
                return AgentRoutes.storageFailure(error)
            }
        }

        router.get("/v1/console/conversations/{id}/recording") { request in
            if let refusal = authorize(request) { return refusal }
            return await ConversationRoutes.recording(request, context: context)
        }

        router.get("/v1/console/stats") { request in
            if let refusal = authorize(request) { return refusal }
            do throws(BadRequest) {
                let window = try ConsoleCallFilter.window(from: request.query, now: Date())
                do {
                    let turns = try await context.store.turnFigures(from: window.from, before: window.to)
                    let starts = try await context.store.callStartTimes(from: window.from, before: window.to)
                    return JSONResponse.ok(ConsoleStats.make(turns: turns, callStarts: starts, from: window.from, to: window.to, bucketSeconds: window.bucketSeconds))
                } catch {
                    return AgentRoutes.storageFailure(error)
                }
            } catch {
                return error.response
            }
        }

        AgentRoutes.register(on: &router, context: context, at: "/v1/console/agents", authorize: authorize)
    }

    /// This node's sessions with their state, then the other nodes' live calls from the store
    /// with the states those nodes published.
    static func liveSessions(context: ServerContext) async throws -> [ConsoleViews.LiveSession] {
        let now = Date()
        let node = context.coordinator.nodeID
        // The store knows each call's agent (from its conversation).
        let agents = Dictionary(
            try await context.store.calls(CallQuery(isLive: true, limit: 1_000)).calls.map { ($0.id, $0.agentID) }
        ) { first, _ in first }
        var sessions: [ConsoleViews.LiveSession] = []
        for (entry, activity) in context.sessions.allWithActivity {
            sessions.append(ConsoleViews.LiveSession(
                id: entry.sessionID, conversationID: entry.conversationID, agentID: agents[entry.sessionID] ?? nil, instanceID: entry.instanceID,
                user: entry.owner?.user, door: entry.door, node: node, startedAt: entry.startedAt.timeIntervalSince1970,
                durationSeconds: ConsoleViews.tenths(now.timeIntervalSince(entry.startedAt)), state: activity.state,
                turns: activity.turns, errors: activity.errors
            ))
        }
        for remote in try await context.coordinator.otherNodesLiveSessions() {
            let call = remote.call
            sessions.append(ConsoleViews.LiveSession(
                id: call.id, conversationID: call.conversationID, agentID: call.agentID, user: call.userID, door: call.door,
                node: call.nodeID, startedAt: call.startedAt.timeIntervalSince1970,
                durationSeconds: ConsoleViews.tenths(call.durationSeconds(now: now)), state: remote.state
            ))
        }
        return sessions
    }

    /// Carries out an interrupt or an end on the session `{id}`, on the node the body or query
    /// names (this node when neither does).
    private static func command(
        _ request: HTTPRequest, context: ServerContext, object: String,
        _ carryOut: @Sendable (_ sessionID: String, _ node: String) async throws -> Bool
    ) async -> HTTPResponse {
        struct Target: Decodable { var node: String? }
        let id = request.pathParameters["id"] ?? ""
        var node = request.query["node"]
        if node == nil {
            do throws(BadRequest) {
                node = try request.jsonBody(Target.self, allowEmpty: true).node
            } catch {
                return error.response
            }
        }
        let target = node ?? context.coordinator.nodeID
        do {
            guard try await carryOut(id, target) else {
                return .error(status: 404, code: "session_not_found", message: "No session \(id) is live on node \(target).")
            }
        } catch let error as CoordinationError {
            return .error(status: 503, code: error.code, message: error.message)
        } catch {
            return .error(status: 503, code: "owner_unreachable", message: "Node \(target) could not be reached.")
        }
        context.log.log(object, session: id, ["node": .string(target)])
        return JSONResponse.ok(["id": id, "object": object, "node": target])
    }

    /// A conversation with its calls, items (marked with their agents, handoffs and fillers),
    /// turns' figures and recording.
    private static func conversation(_ id: String, context: ServerContext) async throws -> ConsoleViews.Conversation {
        let now = Date()
        let calls = try await context.store.calls(conversationID: id)
        let items = try await context.store.items(conversationID: id)
        let figures = try await context.store.turnFigures(conversationID: id)
        let placement = RecordingPlacement(calls: calls, now: now)
        let recording = context.recordings.file(conversationID: id).map { file in
            ConsoleViews.Recording(
                url: "/v1/console/conversations/\(id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? "")/recording",
                durationMs: file.durationMs
            )
        }
        let firstAgentID = calls.first?.agentID
        var agents: [String: AgentDefinition] = [:]
        for agentID in Set(items.compactMap(\.agentID) + [firstAgentID].compactMap { $0 }) {
            if let record = try await context.store.agent(id: agentID) { agents[agentID] = try? AgentRoutes.decode(record) }
        }
        return ConsoleViews.Conversation(
            id: id, agentID: firstAgentID, calls: calls.map { ConsoleViews.Call($0, now: now) },
            items: ConsoleTranscript.items(items, firstAgentID: firstAgentID, agents: agents),
            turns: figures.map { ConsoleViews.Turn($0, recordingMs: placement.milliseconds(ofSpeechEndIn: $0)) },
            recording: recording
        )
    }
}
