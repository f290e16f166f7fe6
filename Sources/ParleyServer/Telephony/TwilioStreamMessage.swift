import Foundation
import ParleyCore
import ParleyNet

/// A message Twilio sends on a Media Streams WebSocket (JSON text, named by `event`).
enum TwilioInboundMessage: Sendable, Hashable {
    /// The first message: the protocol in use.
    case connected
    /// The stream's metadata, sent once after `connected`.
    case start(TwilioStreamStart)
    /// Caller audio: base64 μ-law at 8 kHz.
    case media(track: String?, payload: String)
    /// A mark of ours whose audio has finished playing (or was cleared).
    case mark(name: String)
    /// The caller pressed a key.
    case dtmf(digit: String)
    /// The stream ended (the call hung up or moved on).
    case stop
    /// An event this version does not know; ignored, as Twilio may add events.
    case other(event: String)

    /// Why a message could not be read.
    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    /// Decodes one WebSocket message (Twilio sends only text).
    static func decode(_ message: WebSocketMessage) -> Result<TwilioInboundMessage, Malformed> {
        guard case .text(let text) = message else { return .failure(Malformed(description: "a binary message")) }
        return Result { () throws(Malformed) in try decode(text) }
    }

    /// Decodes one text message.
    /// - Throws: `Malformed` when it is not a JSON object with an `event`, or lacks a field its event needs.
    static func decode(_ text: String) throws(Malformed) -> TwilioInboundMessage {
        guard let json = try? JSONValue(parsing: text), case .object = json, let event = json["event"]?.stringValue else {
            throw Malformed(description: "not a JSON object with an \"event\"")
        }
        func field(_ object: String, _ name: String) throws(Malformed) -> String {
            guard let value = json[object]?[name]?.stringValue else { throw Malformed(description: "\(event) without \(object).\(name)") }
            return value
        }
        switch event {
        case "connected":
            return .connected
        case "start":
            var parameters: [String: String] = [:]
            if case .object(let members)? = json["start"]?["customParameters"] {
                for (name, value) in members { parameters[name] = value.stringValue }
            }
            let format = json["start"]?["mediaFormat"]
            return .start(TwilioStreamStart(
                streamSID: try field("start", "streamSid"), callSID: try field("start", "callSid"),
                accountSID: json["start"]?["accountSid"]?.stringValue, customParameters: parameters,
                encoding: format?["encoding"]?.stringValue, sampleRate: format?["sampleRate"]?.numberValue.map { Int($0) }
            ))
        case "media":
            return .media(track: json["media"]?["track"]?.stringValue, payload: try field("media", "payload"))
        case "mark":
            return .mark(name: try field("mark", "name"))
        case "dtmf":
            let digit = try field("dtmf", "digit")
            guard digit.count == 1, "0123456789*#ABCD".contains(digit) else { throw Malformed(description: "dtmf digit \"\(digit.prefix(8))\" is not a key") }
            return .dtmf(digit: digit)
        case "stop":
            return .stop
        default:
            return .other(event: String(event.prefix(64)))
        }
    }
}

/// The `start` message's metadata.
struct TwilioStreamStart: Sendable, Hashable {
    var streamSID: String
    var callSID: String
    var accountSID: String?
    /// The `<Parameter>`s of the TwiML `<Stream>`.
    var customParameters: [String: String]
    /// `audio/x-mulaw` for phone calls.
    var encoding: String?
    var sampleRate: Int?
}

/// The messages Parley sends Twilio on a bidirectional stream.
enum TwilioOutboundMessage: Sendable, Hashable {
    /// Audio to play: base64 μ-law at 8 kHz.
    case media(payload: String)
    /// Asks Twilio to echo `name` once the audio sent before it has played.
    case mark(name: String)
    /// Drops the audio Twilio has buffered but not yet played.
    case clear

    /// The message as JSON text for the stream `streamSID`.
    func encode(streamSID: String) -> String {
        let body: [String: JSONValue] = switch self {
        case .media(let payload): ["event": "media", "media": .object(["payload": .string(payload)])]
        case .mark(let name): ["event": "mark", "mark": .object(["name": .string(name)])]
        case .clear: ["event": "clear"]
        }
        return JSONValue.object(body.merging(["streamSid": .string(streamSID)]) { first, _ in first }).jsonText
    }
}
