import Foundation
import ParleyNet

/// Phone calls through Twilio: the call webhook and the media stream, sharing the stream tokens,
/// and the stream's end, which carries out the transfers the agents asked for.
enum TwilioRoutes {
    static func register(on router: inout Router, context: ServerContext) {
        let tokens = TwilioStreamTokens(lifetime: context.settings.telephony.streamTokenLifetime)
        let transfers = TwilioTransfers()
        TwilioVoiceWebhook.register(on: &router, context: context, tokens: tokens)
        router.webSocket(TwilioVoiceWebhook.streamPath, TwilioStreamEndpoint.route(context: context, tokens: tokens, transfers: transfers))
        TwilioStreamEnded.register(on: &router, context: context, transfers: transfers)
    }
}
