import Foundation
import ParleyCore
import ParleyNet
import ParleyRTC

/// `POST /v1/realtime/calls`: OpenAI's WebRTC entry. The body is the SDP offer
/// (`application/sdp`), or `multipart/form-data` with an `sdp` part and a `session` part
/// (the session's settings, as in `session.update`). Credentials are those of the WebSocket
/// endpoint, and admission (limits, cluster, drain) the same `SessionAdmission`. The answer is `201 Created`, `application/sdp`, with the call's
/// URL in `Location` (exposed to browsers by CORS); the call's events then travel on its
/// `oai-events` data channel and its audio on the track.
enum RealtimeCallsRoute {
    static let path = "/v1/realtime/calls"
    /// Browsers post from other origins (OpenAI's own clients do): let them read the answer and its `Location`.
    static let corsHeaders: HTTPHeaders = [
        "Access-Control-Allow-Origin": "*",
        "Access-Control-Expose-Headers": "Location",
    ]

    static func register(on router: inout Router, context: ServerContext) {
        router.post(path) { request in
            var response = await withTaskExecutorPreference(globalConcurrentExecutor) { await answer(request, context: context) }
            for (name, value) in corsHeaders { response.headers.set(name, value) }
            return response
        }
        router.add("OPTIONS", path) { _ in
            var headers = corsHeaders
            headers.set("Access-Control-Allow-Methods", "POST, OPTIONS")
            headers.set("Access-Control-Allow-Headers", "Authorization, Content-Type, OpenAI-Beta")
            headers.set("Access-Control-Max-Age", "600")
            return HTTPResponse(status: 204, headers: headers)
        }
    }

    private static func answer(_ request: HTTPRequest, context: ServerContext) async -> HTTPResponse {
        if let refusal = RealtimeEndpoint.refusal(of: request, context: context) { return refusal }
        let offerText: String
        var sessionUpdate: String?
        do throws(BadRequest) {
            (offerText, sessionUpdate) = try readBody(of: request)
        } catch {
            return error.response
        }
        let offer: SessionOffer
        do {
            offer = try SessionOffer(parsing: offerText)
        } catch {
            return .error(status: 400, code: "invalid_offer", message: error.description)
        }
        if let update = sessionUpdate {
            do {
                guard case .sessionUpdate = try RealtimeClientEvent.decode(update, dialect: .ga) else { throw BadRequest("session") }
            } catch {
                return .error(status: 400, code: "invalid_session", message: "The 'session' part is not valid session settings: \(error)")
            }
        }
        let admission: SessionAdmission
        do {
            admission = try await SessionAdmission.reserve(
                RealtimeEndpoint.admissionRequest(request, door: "webrtc", context: context), context: context
            )
        } catch {
            return .error(status: error.httpStatus, code: error.code, message: error.message)
        }
        let setup: SessionSetup
        let call: RTCCall
        do {
            setup = try await SessionSetup.make(for: request, context: admission.context)
        } catch {
            await admission.release()
            return .error(status: 400, code: "session_setup_failed", message: "\(error)")
        }
        do {
            call = try context.calls.open(offer: offer)
        } catch {
            setup.providers.recorder?.finish()
            await admission.release()
            return .error(status: 500, code: "webrtc_unavailable", message: error.description)
        }
        let session = VoiceSession(providers: setup.providers, configuration: setup.configuration, history: setup.history)
        let sessionID: String
        do {
            sessionID = try await admission.admit(session, instanceID: setup.instanceID, conversationID: setup.conversationID) { call.close() }
        } catch {
            setup.providers.recorder?.finish()
            call.close()
            context.calls.remove(call)
            return .error(status: error.httpStatus, code: error.code, message: error.message)
        }
        let connection = RealtimeConnection(
            transport: RealtimeCallTransport(call: call, outputSampleRate: session.outputSampleRate), dialect: .ga, context: admission.context, session: session, sessionID: sessionID,
            configuration: setup.configuration, conversationID: setup.conversationID, instanceID: setup.instanceID,
            sendsParleyEvents: request.query["parley_events"] == "true",
            tracer: context.traces.map {
                TurnTracer(exporter: $0, model: setup.modelName, sessionID: sessionID, conversationID: setup.conversationID)
            },
            mcpServers: setup.mcpServers, allowsSessionMCPServers: setup.allowsSessionMCPServers,
            sessionMCPServerPolicy: setup.sessionMCPServerPolicy, handoffs: setup.handoffs, keyPressMessages: setup.keyPressMessages
        )
        context.calls.attach(connection, to: call)
        Task.detached {
            await withTaskExecutorPreference(globalConcurrentExecutor) {
                await connection.run(applying: sessionUpdate)
            }
            call.close()
            context.calls.remove(call)
            await admission.end(sessionID: sessionID)
        }
        context.log.log("call.started", ["call": .string(call.id)])
        return HTTPResponse(
            status: 201,
            headers: ["Content-Type": "application/sdp", "Location": "\(path)/\(call.id)"],
            body: .data(Data(call.answer.utf8))
        )
    }

    /// The offer and the `session.update` event made of the `session` part, if any.
    private static func readBody(of request: HTTPRequest) throws(BadRequest) -> (offer: String, sessionUpdate: String?) {
        let contentType = request.headers["Content-Type"] ?? ""
        guard request.body.count <= SessionOffer.maximumSize + 64 * 1024 else {
            throw BadRequest("The body is larger than an SDP offer and its session settings can be.", code: "invalid_offer", status: 413)
        }
        if contentType.lowercased().hasPrefix("multipart/form-data") {
            let form = try MultipartFormParts(body: request.body, contentType: contentType)
            guard let sdp = form.parts["sdp"] else { throw BadRequest("The multipart body has no 'sdp' part.", code: "invalid_offer") }
            let update = form.parts["session"].map { #"{"type":"session.update","session":"# + $0 + "}" }
            return (sdp, update)
        }
        guard contentType.lowercased().hasPrefix("application/sdp") || contentType.isEmpty else {
            throw BadRequest("Send the offer as application/sdp, or as multipart/form-data with 'sdp' and 'session' parts.", code: "invalid_offer", status: 415)
        }
        return (String(decoding: request.body, as: UTF8.self), nil)
    }
}
