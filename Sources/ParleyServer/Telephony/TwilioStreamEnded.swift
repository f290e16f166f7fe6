import Foundation
import ParleyNet

/// `POST /v1/telephony/twilio/stream-ended`: the `<Connect action>` Twilio asks what next once a
/// call's media stream ended. A call whose agent asked for a transfer (`transfer_call`) is
/// dialled onward (`<Dial>` a number, or `<Dial><Sip>` a SIP URI); any other is hung up. Signed
/// like the call webhook, and refused the same way without a valid signature.
enum TwilioStreamEnded {
    /// The action's path.
    static let path = "/v1/telephony/twilio/stream-ended"

    static func register(on router: inout Router, context: ServerContext, transfers: TwilioTransfers) {
        router.post(path) { request in
            let form: [String: String]
            switch TwilioVoiceWebhook.signedForm(of: request, context: context) {
            case .success(let signed): form = signed
            case .failure(let refusal): return refusal.response
            }
            guard let callSID = form["CallSid"], !callSID.isEmpty else {
                return .error(status: 400, code: "invalid_request", message: "Twilio's stream action carries CallSid (form-encoded); this request has none.")
            }
            guard let target = transfers.take(callSID: callSID) else { return .text(hangUpTwiML, contentType: "text/xml; charset=utf-8") }
            context.log.log("twilio.transferred", session: callSID)
            return .text(dialTwiML(target), contentType: "text/xml; charset=utf-8")
        }
    }

    /// The TwiML that ends the call.
    static let hangUpTwiML = """
        <?xml version="1.0" encoding="UTF-8"?>
        <Response><Hangup/></Response>
        """

    /// The TwiML that dials `target`: an E.164 number, or a SIP URI.
    static func dialTwiML(_ target: String) -> String {
        let noun = target.lowercased().hasPrefix("sip") ? "<Sip>\(TwilioVoiceWebhook.xmlEscaped(target))</Sip>" : TwilioVoiceWebhook.xmlEscaped(target)
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <Response><Dial>\(noun)</Dial></Response>
            """
    }
}
