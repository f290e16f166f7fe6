import Foundation
import ParleyCore
import ParleyNet
import ParleySIP

/// The `realtime.call.incoming` webhook, as OpenAI sends it: a JSON event naming the call and
/// its SIP headers (From, To, Call-ID and the custom `X-` ones), signed the Standard Webhooks way (`webhook-id`, `webhook-timestamp`,
/// `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`).
enum SIPIncomingWebhook {
    /// The event's JSON for a ringing `call` known to the backend as `callID`.
    static func body(callID: String, call: SIPCall, eventID: String, createdAt: Int) -> Data {
        let headers: [JSONValue] = ([("From", call.fromHeader), ("To", call.toHeader), ("Call-ID", call.id)] + call.customHeaders).map { name, value in
            ["name": .string(name), "value": .string(value)]
        }
        let event: JSONValue = [
            "object": "event", "id": .string(eventID), "type": "realtime.call.incoming", "created_at": .number(Double(createdAt)),
            "data": ["call_id": .string(callID), "sip_headers": .array(headers)],
        ]
        return Data(event.jsonText.utf8)
    }

    /// The Standard Webhooks signature header of `body`, with `secret` (`whsec_` and base64, or raw text).
    static func signature(of body: Data, id: String, timestamp: Int, secret: String) -> String {
        let key = secret.hasPrefix("whsec_") ? Data(base64Encoded: String(secret.dropFirst(6))) ?? Data(secret.utf8) : Data(secret.utf8)
        let signed = Data("\(id).\(timestamp).".utf8) + body
        return "v1," + HMACSHA256.authenticationCode(for: signed, key: key).base64EncodedString()
    }

    /// Posts the event for `call` to `url`; throws when the backend cannot be reached or does not answer 2xx.
    static func post(to url: URL, secret: String, callID: String, call: SIPCall) async throws {
        let eventID = RealtimeID.make("evt")
        let timestamp = Int(Date().timeIntervalSince1970)
        let body = body(callID: callID, call: call, eventID: eventID, createdAt: timestamp)
        let response = try await HTTPClient.shared.send(HTTPClient.Request(
            url: url, method: "POST",
            headers: [
                "Content-Type": "application/json", "webhook-id": eventID, "webhook-timestamp": "\(timestamp)",
                "webhook-signature": signature(of: body, id: eventID, timestamp: timestamp, secret: secret),
            ],
            body: body, idleTimeout: .seconds(10)
        ))
        guard (200..<300).contains(response.status) else { throw WebhookRefused(status: response.status) }
    }

    /// The backend answered the webhook with a status other than 2xx.
    struct WebhookRefused: Error, CustomStringConvertible {
        var status: Int
        var description: String { "the call webhook answered HTTP \(status)" }
    }
}
