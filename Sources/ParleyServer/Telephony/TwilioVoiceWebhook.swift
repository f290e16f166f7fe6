import Foundation
import ParleyCore
import ParleyNet
import ParleyStore

/// `POST /v1/telephony/twilio/voice`: Twilio's call webhook. Answers with TwiML connecting the
/// call to the media stream endpoint, with a single-use stream token as a custom parameter.
///
/// The agent is the one named by `?agent=ID`, else the one whose `telephony.phone_numbers`
/// holds the called number (`To`), else the server's default agent. Only Twilio may call it:
/// without `PARLEY_TWILIO_AUTH_TOKEN` every request is refused (403, naming the setting), and
/// with it a request without a valid `X-Twilio-Signature` is refused (403).
enum TwilioVoiceWebhook {
    /// The webhook's path.
    static let path = "/v1/telephony/twilio/voice"
    /// The media stream endpoint's path.
    static let streamPath = "/v1/telephony/twilio/stream"
    /// The custom parameter carrying the stream token.
    static let tokenParameter = "parley_token"

    static func register(on router: inout Router, context: ServerContext, tokens: TwilioStreamTokens) {
        router.post(path) { request in
            await answer(request, context: context, tokens: tokens)
        }
    }

    static func answer(_ request: HTTPRequest, context: ServerContext, tokens: TwilioStreamTokens) async -> HTTPResponse {
        let form: [String: String]
        switch signedForm(of: request, context: context) {
        case .success(let signed): form = signed
        case .failure(let refusal): return refusal.response
        }
        let settings = context.settings.telephony
        guard let callSID = form["CallSid"], !callSID.isEmpty else {
            return .error(status: 400, code: "invalid_request", message: "A Twilio call webhook carries CallSid (form-encoded); this request has none.")
        }
        let agentID: String?
        do {
            agentID = try await agent(for: request.query["agent"], calledNumber: form["To"], store: context.store)
        } catch let error as AgentNotFound {
            return .error(status: 404, code: "not_found", message: "No agent \(error.agentID); fix the ?agent= of the webhook URL in Twilio's console.")
        } catch {
            return AgentRoutes.storageFailure(error)
        }
        let grant = TwilioStreamTokens.Grant(callSID: callSID, agentID: agentID, caller: form["From"] ?? "")
        if let refusal = SessionAdmission.precheck(owner: grant.owner, context: context) {
            // Twilio plays this to the caller and hangs up.
            context.metrics.doorRefused(door: "twilio", reason: refusal.code)
            context.log.log("twilio.call_refused", ["call": .string(callSID), "reason": .string(refusal.code)])
            return .text(refusalTwiML(refusal), contentType: "text/xml; charset=utf-8")
        }
        let token = tokens.issue(grant)
        context.log.log("twilio.call_answered", ["call": .string(callSID), "agent": .string(agentID ?? "default")])
        let actionURL = publicBase(of: request, settings: settings) + TwilioStreamEnded.path
        return .text(twiML(streamURL: streamURL(of: request, settings: settings), token: token, actionURL: actionURL), contentType: "text/xml; charset=utf-8")
    }

    /// The form of a request Twilio signed; refused (403) without `PARLEY_TWILIO_AUTH_TOKEN` or
    /// a valid `X-Twilio-Signature`, and counted.
    static func signedForm(of request: HTTPRequest, context: ServerContext) -> Result<[String: String], Refused> {
        let parameters = FormURLEncoded.parameters(request.body)
        let settings = context.settings.telephony
        guard let authToken = settings.twilioAuthToken else {
            context.log.log("twilio.refused_unconfigured", ["path": .string(request.path)])
            context.metrics.doorRefused(door: "twilio", reason: "not_configured")
            return .failure(Refused(response: .error(
                status: 403, code: "twilio_not_configured",
                message: "Phone calls are off: set PARLEY_TWILIO_AUTH_TOKEN to the Twilio account's auth token so this server can verify that Twilio signed each call."
            )))
        }
        let signature = request.headers["X-Twilio-Signature"] ?? ""
        guard TwilioSignature.isValid(signature, url: signedURL(of: request, settings: settings), parameters: parameters, authToken: authToken) else {
            context.log.log("twilio.signature_refused", ["path": .string(request.path)])
            context.metrics.doorRefused(door: "twilio", reason: "invalid_signature")
            return .failure(Refused(response: .error(
                status: 403, code: "invalid_signature", message: "X-Twilio-Signature is missing or does not match this request and the configured auth token."
            )))
        }
        return .success(Dictionary(parameters.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last }))
    }

    /// A request refused before it was read, and the answer it gets.
    struct Refused: Error {
        var response: HTTPResponse
    }

    struct AgentNotFound: Error {
        var agentID: String
    }

    /// The agent named in the query, else the one with the called number, else `nil` (the default agent).
    static func agent(for requested: String?, calledNumber: String?, store: any ParleyStore) async throws -> String? {
        if let requested {
            guard try await store.agent(id: requested) != nil else { throw AgentNotFound(agentID: requested) }
            return requested
        }
        guard let calledNumber, !calledNumber.isEmpty else { return nil }
        for record in try await store.agents() {
            if let definition = try? AgentRoutes.decode(record), definition.telephony?.phoneNumbers?.contains(calledNumber) == true {
                return record.id
            }
        }
        return nil
    }

    /// The TwiML that connects the call to the media stream, a bidirectional `<Connect><Stream>`;
    /// when the stream ends Twilio asks `actionURL` what next.
    static func twiML(streamURL: String, token: String, actionURL: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <Response><Connect action="\(xmlEscaped(actionURL))"><Stream url="\(xmlEscaped(streamURL))"><Parameter name="\(tokenParameter)" value="\(xmlEscaped(token))"/></Stream></Connect></Response>
        """
    }

    /// The TwiML that tells the caller why the call cannot be taken, then hangs up.
    static func refusalTwiML(_ refusal: SessionAdmission.Refusal) -> String {
        let words = switch refusal {
        case .limit(.userLimit), .limit(.tokenLimit): "Sorry, this number already has as many calls open as we allow. Please end one and call again."
        case .limit(.serverFull), .limit(.clusterFull), .draining, .storageUnavailable: "Sorry, all our lines are busy. Please call again in a few minutes."
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <Response><Say>\(xmlEscaped(words))</Say><Hangup/></Response>
            """
    }

    /// The base URL Twilio reaches the server at: the configured public URL, else the
    /// request's `Host` (https unless it is a loopback address or a proxy said http).
    static func publicBase(of request: HTTPRequest, settings: TelephonySettings) -> String {
        if let base = settings.publicBase { return base }
        let host = request.headers["Host"] ?? "127.0.0.1"
        let forwarded = request.headers["X-Forwarded-Proto"]?.lowercased()
        let isLoopback = host.hasPrefix("127.") || host.hasPrefix("localhost") || host.hasPrefix("[::1]")
        let scheme = forwarded ?? (isLoopback ? "http" : "https")
        return "\(scheme)://\(host)"
    }

    /// The URL Twilio signed: the public base, the path and the query (`?agent=` is the only
    /// parameter Parley reads; several are put in name order).
    static func signedURL(of request: HTTPRequest, settings: TelephonySettings) -> String {
        var url = publicBase(of: request, settings: settings) + request.path
        if !request.query.isEmpty {
            let allowed = CharacterSet.urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+"))
            url += "?" + request.query.sorted { $0.key < $1.key }.map { name, value in
                "\(name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name)=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value)"
            }.joined(separator: "&")
        }
        return url
    }

    /// The media stream's WebSocket URL (wss for https).
    static func streamURL(of request: HTTPRequest, settings: TelephonySettings) -> String {
        let base = publicBase(of: request, settings: settings)
        let socketBase = base.hasPrefix("https://") ? "wss://" + base.dropFirst(8) : "ws://" + base.drop { $0 != "/" }.dropFirst(2)
        return socketBase + streamPath
    }

    static func xmlEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
