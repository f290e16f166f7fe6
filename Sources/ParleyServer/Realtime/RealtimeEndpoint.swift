import Foundation
import ParleyCore
import ParleyNet
import ParleyOpenAI
import ParleyStore

/// `GET /v1/realtime`: the OpenAI-Realtime-compatible WebSocket endpoint.
///
/// Credentials are checked before the upgrade (401 for missing, expired, forged or
/// out-of-scope ones). `?instance=ID` joins an agent instance (its agent, user and
/// conversation); `?agent=ID` starts a fresh conversation with an agent; otherwise the
/// server's default agent answers. `?parley_events=true` asks for Parley's own `parley.*`
/// events, which other clients never see.
enum RealtimeEndpoint {
    static func route(context: ServerContext) -> WebSocketRoute {
        WebSocketRoute(
            decide: { request in decide(request, context: context) },
            onConnection: { socket, request in
                // Session setup (the store) and the voice session's work (audio processing,
                // providers) stay off the network thread the handler would otherwise prefer.
                await withTaskExecutorPreference(globalConcurrentExecutor) {
                    if let callID = request.query["call_id"] {
                        await RealtimeSideband.serve(socket, callID: callID, context: context)
                    } else {
                        await serve(socket, request: request, context: context)
                    }
                }
            }
        )
    }

    private static func decide(_ request: HTTPRequest, context: ServerContext) -> WebSocketUpgradeDecision {
        if let callID = request.query["call_id"] {
            if let refusal = RealtimeSideband.refusal(of: request, callID: callID, context: context) { return .reject(refusal) }
        } else if let refusal = refusal(of: request, context: context) {
            return .reject(refusal)
        }
        let offersRealtime = request.headers.values(for: "Sec-WebSocket-Protocol")
            .flatMap { $0.split(separator: ",") }
            .contains { $0.trimmingCharacters(in: .whitespaces) == "realtime" }
        return .accept(subprotocol: offersRealtime ? "realtime" : nil)
    }

    /// Why a realtime session (a WebSocket or a WebRTC call) may not start, judged before any
    /// work: bad or out-of-scope credentials (401), the node draining (503), a session limit of
    /// this node or the caller (503, 429); `nil` lets it on to `SessionAdmission`.
    static func refusal(of request: HTTPRequest, context: ServerContext) -> HTTPResponse? {
        let caller: Caller
        do {
            caller = try context.authentication.caller(of: request)
        } catch {
            return .error(status: 401, code: "invalid_api_key", message: "Realtime needs a valid client token or the server secret: \(error).")
        }
        if case .client(let claims) = caller {
            let instanceID = SessionSetup.requestedInstance(of: request, caller: caller)
            // An instance's agent is in the store, which this decision on the network thread does
            // not wait for: an agent-scoped token joining an instance is checked against the
            // instance's agent in `SessionSetup`, before the session starts.
            let agentID = instanceID != nil && request.query["agent"] == nil ? claims.agentID : request.query["agent"]
            do {
                try claims.checkScope(agentID: agentID, instanceID: instanceID)
            } catch {
                return .error(status: 401, code: "invalid_api_key", message: "This token does not grant access to that agent or instance.")
            }
        }
        if let refusal = SessionAdmission.precheck(owner: LiveSessions.Owner(caller), context: context) {
            return .error(status: refusal.httpStatus, code: refusal.code, message: refusal.message)
        }
        return nil
    }

    /// The request a realtime door puts to `SessionAdmission`.
    static func admissionRequest(_ request: HTTPRequest, door: String, context: ServerContext) -> SessionAdmission.Request {
        let caller = try? context.authentication.caller(of: request)
        return SessionAdmission.Request(
            door: door, owner: caller.flatMap(LiveSessions.Owner.init),
            instanceID: SessionSetup.requestedInstance(of: request, caller: caller), caller: caller
        )
    }

    /// The beta shapes when the client sends `OpenAI-Beta: realtime=v1`, else the GA ones.
    static func dialect(of request: HTTPRequest) -> RealtimeDialect {
        request.headers.values(for: "OpenAI-Beta").contains { $0.contains("realtime=v1") } ? .beta : .ga
    }

    private static func serve(_ socket: WebSocketConnection, request: HTTPRequest, context: ServerContext) async {
        let dialect = dialect(of: request)
        func refuse(_ code: String, _ message: String, closeCode: UInt16) {
            let event = RealtimeServerEvent.error(RealtimeProtocolError(code: code, message: message))
            if let text = event.encode(dialect: dialect) { try? socket.send(.text(text)) }
            socket.close(code: closeCode, reason: code.replacingOccurrences(of: "_", with: " "))
        }
        let admission: SessionAdmission
        do {
            admission = try await SessionAdmission.reserve(admissionRequest(request, door: "websocket", context: context), context: context)
        } catch {
            refuse(error.code, error.message, closeCode: 1013)
            return
        }
        let setup: SessionSetup
        do {
            setup = try await SessionSetup.make(for: request, context: admission.context)
        } catch {
            await admission.release()
            refuse("session_setup_failed", "\(error)", closeCode: WebSocketCloseCode.policyViolation)
            return
        }
        let session = VoiceSession(providers: setup.providers, configuration: setup.configuration, history: setup.history)
        await admission.serve(
            session, instanceID: setup.instanceID, conversationID: setup.conversationID, socket: socket, disconnectReason: "instance ended",
            onRefusal: { refusal in
                setup.providers.recorder?.finish()
                let event = RealtimeServerEvent.error(RealtimeProtocolError(code: refusal.code, message: refusal.message))
                if let text = event.encode(dialect: dialect) { try? socket.send(.text(text)) }
            }
        ) { sessionID in
            let connection = RealtimeConnection(
                transport: WebSocketTransport(socket: socket, audioLeadMs: context.settings.webSocketAudioLeadMs), dialect: dialect, context: admission.context, session: session, sessionID: sessionID,
                configuration: setup.configuration, conversationID: setup.conversationID, instanceID: setup.instanceID,
                sendsParleyEvents: request.query["parley_events"] == "true",
                tracer: context.traces.map {
                    TurnTracer(exporter: $0, model: setup.modelName, sessionID: sessionID, conversationID: setup.conversationID)
                },
                mcpServers: setup.mcpServers, allowsSessionMCPServers: setup.allowsSessionMCPServers,
                sessionMCPServerPolicy: setup.sessionMCPServerPolicy, handoffs: setup.handoffs, keyPressMessages: setup.keyPressMessages
            )
            await connection.run()
        }
    }
}

/// What a new realtime session starts with: its agent's configuration, providers and history.
struct SessionSetup {
    var providers: VoiceSessionProviders
    var configuration: VoiceSessionConfiguration
    var history: [ConversationLedger.Item]
    var conversationID: String
    var instanceID: String?
    /// The language model's name, for traces.
    var modelName: String
    /// The agent's MCP servers.
    var mcpServers: [MCPServerConfiguration] = []
    /// The agent's handoffs: its transfer tools, and the agents it may become.
    var handoffs: SessionHandoffs
    /// Whether the agent asks to be told of the caller's key presses (`telephony.key_press_messages`).
    var keyPressMessages = false
    /// Whether the client may name MCP servers of its own (see `ServerSettings.clientsNameMCPServers`).
    var allowsSessionMCPServers = false
    /// The addresses MCP servers the session names may be reached at: `nil` (any) when the
    /// backend opened the session, else public ones and `ServerSettings.outboundAllowList`.
    var sessionMCPServerPolicy: OutboundPolicy?
    /// Whom the session counts against (a client token's user and id; nil for the backend).
    var owner: LiveSessions.Owner?

    /// An error that keeps a session from starting.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The instance a session joins: the one named by `?instance=`, else (when no agent is
    /// named either) the one a client token was minted for.
    static func requestedInstance(of request: HTTPRequest, caller: Caller?) -> String? {
        if let named = request.query["instance"] { return named }
        if request.query["agent"] == nil, case .client(let claims)? = caller { return claims.instanceID }
        return nil
    }

    static func make(for request: HTTPRequest, context: ServerContext) async throws -> SessionSetup {
        guard let engines = context.providers.current else { throw Failure(description: "The server is still starting; try again in a moment.") }
        var agent = AgentDefinition()
        var conversationID = RealtimeID.conversation()
        var instanceID: String?
        let caller = try? context.authentication.caller(of: request)
        if let requested = requestedInstance(of: request, caller: caller) {
            guard let instance = try await context.store.instance(id: requested) else { throw Failure(description: "No instance \(requested).") }
            if case .client(let claims)? = caller, !claims.mayJoin(instance) {
                throw Failure(description: "This token does not grant access to that agent or instance.")
            }
            guard instance.status != "ended" else { throw Failure(description: "Instance \(requested) has ended.") }
            instanceID = instance.id
            conversationID = instance.conversationID
            // After a handoff the instance is held by the agent handed to.
            if let record = try await context.store.agent(id: instance.currentAgentID ?? instance.agentID) { agent = try AgentRoutes.decode(record) }
        } else if let agentID = request.query["agent"] {
            guard let record = try await context.store.agent(id: agentID) else { throw Failure(description: "No agent \(agentID).") }
            agent = try AgentRoutes.decode(record)
        }
        try await context.store.ensureConversation(id: conversationID, agentID: agent.id)
        let history = try await context.store.items(conversationID: conversationID).map { ConversationLedger.Item(id: $0.id, message: $0.message) }

        let profile = AgentSessionProfile(agent: agent, settings: context.settings)
        var configuration = VoiceSessionConfiguration(
            preemptiveTranscriptionAfterMs: context.settings.preemptiveTranscriptionAfterMs,
            preemptiveGeneration: context.settings.preemptiveGeneration
        )
        configuration.outputTokenCeiling = context.settings.outputTokenCeiling
        profile.apply(to: &configuration)
        let handoffs = SessionHandoffs(context: context, engines: engines, startingAgentID: agent.id)
        var providers = VoiceSessionProviders(
            recognizer: engines.recognizer,
            model: profile.model(engines: engines),
            synthesizer: engines.synthesizer,
            tools: handoffs.tools(of: agent),
            agentOptions: profile.agentOptions,
            makeVoiceActivityDetector: engines.makeVoiceActivityDetector,
            makeResampler: engines.makeResampler,
            turnCompletionModel: engines.turnCompletionModel,
            turnCompletionJudge: engines.turnCompletionJudge,
            makeNoiseSuppressor: engines.makeNoiseSuppressor,
            makeEchoCanceller: engines.makeEchoCanceller
        )
        providers.handoffs = handoffs.desk
        providers.recorder = context.recordings.recorder(
            conversationID: conversationID, agentSetting: agent.recordings, makeResampler: engines.makeResampler
        )
        return SessionSetup(
            providers: providers, configuration: configuration, history: history,
            conversationID: conversationID, instanceID: instanceID,
            modelName: profile.modelName, mcpServers: agent.mcpServerConfigurations, handoffs: handoffs,
            keyPressMessages: agent.telephony?.keyPressMessages ?? false,
            allowsSessionMCPServers: context.settings.clientsNameMCPServers || caller == .backend,
            sessionMCPServerPolicy: caller == .backend ? nil : OutboundPolicy(allowing: context.settings.outboundAllowList),
            owner: caller.flatMap(LiveSessions.Owner.init)
        )
    }
}

extension SessionSetup {
    /// The configuration and providers of the session on a phone call: a phone has no button to
    /// end a turn, so push-to-talk agents take turns by silence, and the phone's `tools` (hang
    /// up, transfer, key presses) belong to every agent that holds the call, handoffs included.
    func onPhone(tools phoneTools: [any Tool]) -> (VoiceSessionConfiguration, VoiceSessionProviders) {
        var configuration = configuration
        if configuration.turnDetection == nil { configuration.turnDetection = ServerVADSettings() }
        var providers = providers
        for tool in phoneTools { providers.tools.register(tool) }
        handoffs.usePhone(doorTools: phoneTools)
        return (configuration, providers)
    }
}
