import Foundation
import ParleyCore
import ParleyNet
import ParleySIP

/// The SIP door: calls from the configured trunks (`SIPSettings`) ring while they are admitted
/// like any session (`SessionAdmission`), are answered once admitted, and run as realtime
/// sessions of the agent whose `telephony.phone_numbers` holds the called number (the
/// default agent otherwise), stored like any conversation. With a call webhook, the backend
/// decides first (`SIPCallControl`): it accepts the call (an agent, session settings) or rejects it. Refused calls are counted per reason
/// (`parley_door_refusals_total{door="sip"}`). Calls Parley places (`SIPOutboundCalls`) go out
/// through the same endpoint and, once answered, run the same way.
final class SIPDoor: Sendable {
    private let endpoint: SIPEndpoint
    let settings: SIPSettings
    let control: SIPCallControl
    private let context: ServerContext

    /// Opens the SIP port and starts answering.
    /// - Throws: `SIPEndpoint.OpenError` when the port cannot be bound.
    init(settings: SIPSettings, control: SIPCallControl, context: ServerContext) throws(SIPEndpoint.OpenError) {
        self.settings = settings
        self.control = control
        self.context = context
        var endpointSettings = SIPEndpoint.Settings()
        endpointSettings.host = context.settings.host
        endpointSettings.port = settings.port ?? 0
        endpointSettings.mediaAddress = settings.mediaAddress
        endpointSettings.rtpPorts = settings.rtpPorts
        endpointSettings.policy = settings.policy
        endpointSettings.invitesPerSecond = settings.invitesPerSecond
        endpoint = try SIPEndpoint(settings: endpointSettings) { refusal in
            context.metrics.doorRefused(door: "sip", reason: refusal.reason)
            // A flood is counted, not logged packet by packet.
            guard refusal.reason != "invite_rate_exceeded" else { return }
            context.log.log("sip.call_refused", ["reason": .string(refusal.reason), "source": .string(refusal.source)])
        }
        Task.detached { [endpoint] in
            await withTaskGroup(of: Void.self) { group in
                for await call in endpoint.incoming {
                    group.addTask {
                        await withTaskExecutorPreference(globalConcurrentExecutor) { await Self.serve(call, settings: settings, control: control, context: context) }
                    }
                }
            }
        }
    }

    /// The port SIP listens on, UDP and TCP.
    var port: Int { endpoint.port }

    /// Hangs up every call and stops listening.
    func close() { endpoint.close() }

    /// Places a call (`SIPEndpoint.dial`); it reports how it goes on its `dialProgress`.
    func dial(_ dial: SIPDial) throws(SIPEndpoint.DialError) -> SIPCall { try endpoint.dial(dial) }

    /// Runs an answered placed call as a session of `agentID`, to its end, the session hearing
    /// `heard` (the callee's first words) first; `nil` once it ran, else why it could not.
    func serveAnswered(_ call: SIPCall, callID: String, agentID: String, heard: [Int16]) async -> String? {
        let owner = LiveSessions.Owner(user: "phone:\(call.called)", tokenID: "sip:\(call.id)")
        return await Self.run(
            call, callID: callID, agentID: agentID, sessionUpdate: nil, owner: owner, heard: heard, control: control, context: context
        )
    }

    /// One call from ringing to its end.
    private static func serve(_ call: SIPCall, settings: SIPSettings, control: SIPCallControl, context: ServerContext) async {
        let owner = LiveSessions.Owner(user: "phone:\(call.caller)", tokenID: "sip:\(call.id)")
        // The backend (and its sideband socket) knows the call by this id.
        let callID = RealtimeID.make("sip")
        var chosenAgent: String?
        var sessionUpdate: String?
        if let url = settings.webhookURL, let secret = settings.webhookSecret {
            switch await backendDecision(on: call, callID: callID, url: url, secret: secret, settings: settings, control: control, context: context) {
            case .accept(let agentID, let update)?:
                chosenAgent = agentID
                sessionUpdate = update
            case .reject(let status)?:
                context.log.log("sip.call_rejected", session: call.id, ["call_id": .string(callID), "status": .number(Double(status))])
                return call.reject(status: status, reason: status == 486 ? "Busy Here" : "Declined")
            case nil:
                return call.reject(status: 480, reason: "Temporarily Unavailable")
            }
        }
        let agentID: String?
        do {
            agentID = try await TwilioVoiceWebhook.agent(for: chosenAgent, calledNumber: calledNumber(call.called), store: context.store)
        } catch {
            context.log.log("sip.session_setup_failed", session: call.id, ["problem": .string("\(error)")])
            return call.reject(status: 500, reason: "Server Internal Error")
        }
        await run(call, callID: callID, agentID: agentID, sessionUpdate: sessionUpdate, owner: owner, control: control, context: context)
    }

    /// A call as a session of `agentID` (the default agent when `nil`), admitted like any
    /// session, answered (when it came in) once admitted, run to its end, hearing `heard` first;
    /// `nil` once it ran, else why it was refused (and the call with it).
    @discardableResult
    private static func run(
        _ call: SIPCall, callID: String, agentID: String?, sessionUpdate: String?, owner: LiveSessions.Owner, heard: [Int16] = [],
        control: SIPCallControl, context: ServerContext
    ) async -> String? {
        var agent: AgentDefinition?
        do {
            if let agentID, let record = try await context.store.agent(id: agentID) { agent = try AgentRoutes.decode(record) }
        } catch {
            context.log.log("sip.session_setup_failed", session: call.id, ["problem": .string("\(error)")])
            call.reject(status: 500, reason: "Server Internal Error")
            return "the agent could not be read: \(error)"
        }
        let admission: SessionAdmission
        do {
            admission = try await SessionAdmission.reserve(.init(door: "sip", owner: owner), context: context)
        } catch {
            context.log.log("sip.call_refused", session: call.id, ["reason": .string(error.code)])
            call.reject(status: error.sipStatus, reason: error.sipReason)
            return error.message
        }
        let setup: SessionSetup
        do {
            // The session is set up as a realtime one for the call's agent, as `?agent=` names it.
            let request = HTTPRequest(method: "GET", path: "/v1/telephony/sip", query: agentID.map { ["agent": $0] } ?? [:])
            setup = try await SessionSetup.make(for: request, context: admission.context)
        } catch {
            await admission.release()
            context.log.log("sip.session_setup_failed", session: call.id, ["problem": .string("\(error)")])
            call.reject(status: 500, reason: "Server Internal Error")
            return "the session could not be set up: \(error)"
        }
        // On the phone the agent can hang up, press keys and transfer the caller.
        let hangUp = PendingHangUp()
        let (configuration, providers) = setup.onPhone(tools: [
            EndCallTool(hangUp: hangUp), SendDTMFTool(call: call), TransferCallTool.sip(call, hangUp: hangUp),
        ])
        let session = VoiceSession(providers: providers, configuration: configuration, history: setup.history)
        let sessionID: String
        do {
            sessionID = try await admission.admit(session, instanceID: nil, conversationID: setup.conversationID) { call.hangUp() }
        } catch {
            setup.providers.recorder?.finish()
            context.log.log("sip.call_refused", session: call.id, ["reason": .string(error.code)])
            call.reject(status: error.sipStatus, reason: error.sipReason)
            return error.message
        }
        let transport = SIPCallTransport(
            call: call, makeResampler: session.makeOutputResampler, keyPressMessages: agent?.telephony?.keyPressMessages ?? false,
            hangUp: hangUp, log: context.log, prelude: heard
        )
        let connection = RealtimeConnection(
            transport: transport, dialect: .ga, context: admission.context, session: session, sessionID: sessionID, configuration: configuration,
            conversationID: setup.conversationID, instanceID: nil, sendsParleyEvents: false,
            tracer: context.traces.map { TurnTracer(exporter: $0, model: setup.modelName, sessionID: sessionID, conversationID: setup.conversationID) },
            mcpServers: setup.mcpServers, allowsSessionMCPServers: setup.allowsSessionMCPServers, sessionMCPServerPolicy: setup.sessionMCPServerPolicy,
            handoffs: setup.handoffs, keyPressMessages: setup.keyPressMessages
        )
        // The backend watches and steers the call on `/v1/realtime?call_id=`, as a WebRTC call,
        // and transfers or hangs it up through `/v1/realtime/calls/{id}/…`.
        context.calls.attach(connection, callID: callID)
        control.add(call, id: callID)
        call.answer()
        context.log.log("sip.call_started", session: call.id, [
            "call_id": .string(callID), "conversation": .string(setup.conversationID), "agent": .string(agentID ?? "default"),
            "codec": .string(call.codec.rawValue), "rtp_port": .number(Double(call.mediaPort)),
        ])
        await connection.run(applying: sessionUpdate)
        control.remove(callID)
        context.calls.detach(callID: callID)
        call.hangUp()
        await admission.end(sessionID: sessionID)
        context.log.log("sip.call_ended", session: call.id, ["ignored_rtp_packets": .number(Double(call.ignoredPackets))])
        return nil
    }

    /// Announces the ringing call to the backend and waits for its decision; `nil` when the
    /// webhook failed or no decision came in time (both logged).
    private static func backendDecision(
        on call: SIPCall, callID: String, url: URL, secret: String, settings: SIPSettings, control: SIPCallControl, context: ServerContext
    ) async -> SIPCallControl.Decision? {
        control.announce(callID)
        do {
            try await SIPIncomingWebhook.post(to: url, secret: secret, callID: callID, call: call)
        } catch {
            context.log.log("sip.webhook_failed", session: call.id, ["call_id": .string(callID), "problem": .string("\(error)")])
            control.forget(callID)
            return nil
        }
        let decided = await control.decision(on: callID, within: settings.decisionTimeout)
        if decided == nil { context.log.log("sip.decision_timed_out", session: call.id, ["call_id": .string(callID)]) }
        return decided
    }

    /// The called user part as an E.164 number when it is one without its `+` (`14155550123`).
    static func calledNumber(_ user: String) -> String {
        let digits = user.hasPrefix("+") ? user.dropFirst() : Substring(user)
        guard !digits.isEmpty, digits.allSatisfy(\.isNumber) else { return user }
        return "+" + digits
    }
}

extension SessionAdmission.Refusal {
    /// The SIP status a caller refused for this gets: 486 for the caller's own limits, else 503.
    var sipStatus: UInt16 {
        switch self {
        case .limit(.userLimit), .limit(.tokenLimit): 486
        default: 503
        }
    }

    /// The status's reason phrase.
    var sipReason: String { sipStatus == 486 ? "Busy Here" : "Service Unavailable" }
}
