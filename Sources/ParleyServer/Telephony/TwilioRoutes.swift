import Foundation
import ParleyNet

/// Phone calls through Twilio: the call webhook and the media stream, sharing the stream tokens.
enum TwilioRoutes {
    static func register(on router: inout Router, context: ServerContext) {
        let tokens = TwilioStreamTokens(lifetime: context.settings.telephony.streamTokenLifetime)
        TwilioVoiceWebhook.register(on: &router, context: context, tokens: tokens)
        router.webSocket(TwilioVoiceWebhook.streamPath, TwilioStreamEndpoint.route(context: context, tokens: tokens))
    }
}
