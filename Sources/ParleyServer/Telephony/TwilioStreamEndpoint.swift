import Foundation
import ParleyCore
import ParleyNet

/// `GET /v1/telephony/twilio/stream`: the Media Streams WebSocket Twilio opens for a call the
/// voice webhook answered. The stream must begin with `connected` (optional) and `start`,
/// whose custom parameters carry the webhook's single-use token; anything else, no `start`
/// within `TelephonySettings.streamStartTimeout`, or a missing, expired or reused token closes
/// the socket with 1008 before a session starts. Each call is
/// a session of its agent with a conversation of its own, stored like any other.
enum TwilioStreamEndpoint {
    static func route(context: ServerContext, tokens: TwilioStreamTokens, transfers: TwilioTransfers) -> WebSocketRoute {
        WebSocketRoute(
            decide: { _ in
                guard context.sessions.count < context.sessions.maximum else {
                    return .reject(.error(status: 503, code: "too_many_sessions", message: "The server is at its limit of \(context.sessions.maximum) sessions."))
                }
                return .accept(subprotocol: nil)
            },
            onConnection: { socket, _ in
                await withTaskExecutorPreference(globalConcurrentExecutor) {
                    await serve(socket, context: context, tokens: tokens, transfers: transfers)
                }
            }
        )
    }

    private static func serve(_ socket: WebSocketConnection, context: ServerContext, tokens: TwilioStreamTokens, transfers: TwilioTransfers) async {
        // A stream that never starts holds no session, but it would hold its socket.
        let timeout = context.settings.telephony.streamStartTimeout
        let watchdog = Task {
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            socket.close(code: WebSocketCloseCode.policyViolation, reason: "no start message within \(timeout.secondsText)")
        }
        let started = await awaitStart(socket, context: context)
        watchdog.cancel()
        guard let start = started else { return }
        guard let token = start.customParameters[TwilioVoiceWebhook.tokenParameter], let grant = tokens.redeem(token),
              grant.callSID == start.callSID else {
            context.log.log("twilio.stream_refused", session: start.callSID, ["reason": "missing, expired or reused stream token"])
            socket.close(code: WebSocketCloseCode.policyViolation, reason: "missing, expired or reused stream token")
            return
        }
        if let encoding = start.encoding, encoding != "audio/x-mulaw" || (start.sampleRate ?? G711.sampleRate) != G711.sampleRate {
            socket.close(code: WebSocketCloseCode.policyViolation, reason: "only audio/x-mulaw at 8000 Hz is supported")
            return
        }
        let admission: SessionAdmission
        do {
            admission = try await SessionAdmission.reserve(.init(door: "twilio", owner: grant.owner), context: context)
        } catch {
            context.log.log("twilio.call_refused", session: start.callSID, ["reason": .string(error.code)])
            socket.close(code: 1013, reason: error.code.replacingOccurrences(of: "_", with: " "))
            return
        }
        let setup: SessionSetup
        let agent: AgentDefinition?
        do {
            // The stream request carries no agent: the session is set up as a realtime one for the granted agent.
            let request = HTTPRequest(method: "GET", path: TwilioVoiceWebhook.streamPath, query: grant.agentID.map { ["agent": $0] } ?? [:])
            setup = try await SessionSetup.make(for: request, context: admission.context)
            agent = try await grant.agentID.asyncMap { id in try await context.store.agent(id: id).map(AgentRoutes.decode) } ?? nil
        } catch {
            await admission.release()
            context.log.log("twilio.session_setup_failed", session: start.callSID, ["problem": .string("\(error)")])
            socket.close(code: WebSocketCloseCode.goingAway, reason: "session setup failed")
            return
        }
        // On the phone the agent can hang up and transfer the caller: the stream closes once its
        // goodbye was heard, and Twilio asks the `<Connect action>` what next (`TwilioStreamEnded`).
        let hangUp = PendingHangUp()
        let (configuration, providers) = setup.onPhone(tools: [
            EndCallTool(hangUp: hangUp),
            TransferCallTool(transfer: { [callSID = start.callSID] target in
                transfers.request(callSID: callSID, target: target)
                return .accepted
            }, hangUp: hangUp),
        ])
        let session = VoiceSession(providers: providers, configuration: configuration, history: setup.history)
        await admission.serve(
            session, instanceID: nil, conversationID: setup.conversationID,
            socket: socket, disconnectReason: "call ended by the server", onRefusal: { _ in setup.providers.recorder?.finish() }
        ) { sessionID in
            let connection = TwilioCallConnection(
                socket: socket, context: admission.context, session: session, sessionID: sessionID, configuration: configuration,
                start: start, conversationID: setup.conversationID,
                keyPressMessages: agent?.telephony?.keyPressMessages ?? false, hangUp: hangUp, agentID: setup.handoffs.startingAgentID
            )
            // A call lasts at most as long as any session; closing the stream hangs it up.
            let lengthLimit = Task { [maximum = context.settings.maximumSessionLength] in
                guard (try? await Task.sleep(for: maximum)) != nil else { return }
                context.log.log("twilio.call_expired", session: start.callSID, ["seconds": .number(Double(maximum.components.seconds))])
                socket.close(code: WebSocketCloseCode.normal, reason: "session expired")
            }
            await connection.run()
            lengthLimit.cancel()
        }
    }

    /// Reads messages up to `start`; closes the socket (and returns `nil`) on anything else.
    private static func awaitStart(_ socket: WebSocketConnection, context: ServerContext) async -> TwilioStreamStart? {
        for await message in socket.messages {
            let decoded: TwilioInboundMessage
            switch TwilioInboundMessage.decode(message) {
            case .success(let message):
                decoded = message
            case .failure(let problem):
                context.log.log("twilio.malformed_message", ["problem": .string(problem.description)])
                socket.close(code: WebSocketCloseCode.policyViolation, reason: "malformed Media Streams message")
                return nil
            }
            switch decoded {
            case .connected: continue
            case .start(let start): return start
            default:
                socket.close(code: WebSocketCloseCode.policyViolation, reason: "the stream must begin with connected and start")
                return nil
            }
        }
        return nil
    }
}

private extension Optional {
    /// `transform` applied to the value, if any.
    func asyncMap<Result>(_ transform: (Wrapped) async throws -> Result) async rethrows -> Result? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
