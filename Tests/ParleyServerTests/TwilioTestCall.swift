import Foundation
import ParleyCore
import ParleyNet
@testable import ParleyServer
import Testing
import ParleyTesting

/// A simulated Twilio: answers a call through Parley's voice webhook, then opens the media
/// stream and follows Twilio's documented message sequence on a real socket — `connected`,
/// `start` with the TwiML's custom parameters, `media` every 20 ms of 8 kHz μ-law, `dtmf`,
/// `stop` — and plays the agent's audio like Twilio does: each `mark` is echoed once the
/// audio before it has played (here: the first `playedMarks` marks), and a `clear` drops the
/// audio not yet played and echoes the marks still waiting.
final class TwilioTestCall: Sendable {
    let socket: WebSocketConnection
    let callSID: String
    let streamSID = "MZ" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    /// What the server sent, as JSON, in order.
    let received = EventInbox()
    private let sequence = SequenceCounter()

    /// The webhook's answer: the TwiML's stream URL and token parameter.
    struct Answer {
        var status: Int
        var body: String
        var streamURL: String?
        var token: String?
    }

    /// The form Twilio posts for an incoming call.
    static func callForm(callSID: String, to: String = "+15005550006") -> [(String, String)] {
        [("AccountSid", "AC0123456789abcdef0123456789abcdef"), ("ApiVersion", "2010-04-01"), ("CallSid", callSID),
         ("CallStatus", "ringing"), ("Called", to), ("Caller", "+14155550100"), ("Direction", "inbound"),
         ("From", "+14155550100"), ("To", to)]
    }

    /// Posts the voice webhook as Twilio does (form-encoded), signed with `authToken` (the test
    /// server's by default; nil sends no signature) or carrying `signature` as given.
    static func answer(
        _ server: TestServer, form: [(String, String)], query: String = "", authToken: String? = TestServer.twilioAuthToken,
        signedURLBase: String? = nil, signature: String? = nil
    ) async throws -> Answer {
        try await answer(baseURL: server.baseURL, form: form, query: query, authToken: authToken, signedURLBase: signedURLBase, signature: signature)
    }

    /// Posts `form` to `path` as Twilio does (form-encoded, signed with `authToken`); the answer's body.
    static func post(_ server: TestServer, path: String, form: [(String, String)], authToken: String = TestServer.twilioAuthToken) async throws -> String {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        let body = form.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed)!)" }.joined(separator: "&")
        let response = try await HTTPClient.shared.send(HTTPClient.Request(
            url: URL(string: server.baseURL.absoluteString + path)!, method: "POST",
            headers: ["Content-Type": "application/x-www-form-urlencoded", "X-Twilio-Signature": sign(url: server.baseURL.absoluteString + path, form: form, authToken: authToken)],
            body: Data(body.utf8)
        ))
        return String(decoding: response.body, as: UTF8.self)
    }

    /// Posts the voice webhook of the server at `baseURL` (a test server, or a `parley serve` process).
    static func answer(
        baseURL: URL, form: [(String, String)], query: String = "", authToken: String? = TestServer.twilioAuthToken,
        signedURLBase: String? = nil, signature: String? = nil
    ) async throws -> Answer {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        let body = form.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed)!)" }.joined(separator: "&")
        var headers = ["Content-Type": "application/x-www-form-urlencoded"]
        let path = "/v1/telephony/twilio/voice" + query
        if let authToken {
            let url = (signedURLBase ?? baseURL.absoluteString) + path
            headers["X-Twilio-Signature"] = sign(url: url, form: form, authToken: authToken)
        }
        if let signature { headers["X-Twilio-Signature"] = signature }
        let response = try await HTTPClient.shared.send(HTTPClient.Request(
            url: URL(string: baseURL.absoluteString + path)!, method: "POST", headers: headers, body: Data(body.utf8)
        ))
        let text = String(decoding: response.body, as: UTF8.self)
        return Answer(
            status: response.status, body: text,
            streamURL: capture(#"<Stream url="([^"]+)""#, in: text), token: capture(#"<Parameter name="parley_token" value="([^"]+)""#, in: text)
        )
    }

    /// Twilio's signature for the request (the algorithm is pinned to Twilio's documented
    /// example in `TwilioProtocolTests`).
    static func sign(url: String, form: [(String, String)], authToken: String) -> String {
        TwilioSignature.expected(url: url, parameters: form.map { (name: $0.0, value: $0.1) }, authToken: authToken)
    }

    private static func capture(_ pattern: String, in text: String) -> String? {
        guard let expression = try? NSRegularExpression(pattern: pattern),
              let match = expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
              let range = Range(match.range(at: 1), in: text) else { return nil }
        return String(text[range]).replacingOccurrences(of: "&amp;", with: "&")
    }

    private init(socket: WebSocketConnection, callSID: String, playedMarks: Int) {
        self.socket = socket
        self.callSID = callSID
        let inbox = received
        let streamSID = self.streamSID
        let sequence = self.sequence
        Task {
            var echoed = 0
            var waiting: [String] = []
            var bytesReceived = 0
            func echo(_ name: String) {
                try? socket.send(.text(#"{"event":"mark","sequenceNumber":"\#(sequence.next())","streamSid":"\#(streamSID)","mark":{"name":"\#(name)"}}"#))
            }
            for await message in socket.messages {
                guard case .text(let text) = message, let json = try? JSONValue(parsing: text) else { continue }
                switch json["event"]?.stringValue {
                case "mark":
                    let name = json["mark"]?["name"]?.stringValue ?? ""
                    if echoed < playedMarks {
                        echoed += 1
                        echo(name)
                        await inbox.add(["event": "played", "bytes": .number(Double(bytesReceived))])
                    } else {
                        waiting.append(name)
                    }
                case "clear":
                    // Twilio drops the buffered audio and sends back the marks that were waiting.
                    waiting.forEach(echo)
                    waiting.removeAll()
                case "media":
                    bytesReceived += (json["media"]?["payload"]?.stringValue).map { (try? Base64Codec.decode($0).count) ?? 0 } ?? 0
                default:
                    break
                }
                await inbox.add(json)
            }
            await inbox.close()
        }
    }

    /// Opens the media stream of an answered call and sends `connected` and `start`.
    /// - Parameters:
    ///   - playedMarks: how many marks are echoed (played); the rest wait for a `clear` or the end.
    ///   - token: the custom parameter to send (the answer's by default; `.some(nil)` sends none).
    static func connect(
        _ answer: Answer, callSID: String, playedMarks: Int = .max, token: String?? = .none, mediaFormat: String = "audio/x-mulaw"
    ) async throws -> TwilioTestCall {
        let url = try #require(answer.streamURL.flatMap(URL.init(string:)))
        let call = TwilioTestCall(socket: try await WebSocketClient.connect(to: url), callSID: callSID, playedMarks: playedMarks)
        try call.socket.send(.text(#"{"event":"connected","protocol":"Call","version":"1.0.0"}"#))
        let sent: String? = switch token {
        case .none: answer.token
        case .some(let value): value
        }
        let parameters = sent.map { #"{"parley_token":"\#($0)","caller_name":"Ada"}"# } ?? "{}"
        try call.socket.send(.text(#"""
            {"event":"start","sequenceNumber":"\#(call.sequence.next())","start":{"accountSid":"AC0123456789abcdef0123456789abcdef","streamSid":"\#(call.streamSID)","callSid":"\#(callSID)","tracks":["inbound"],"mediaFormat":{"encoding":"\#(mediaFormat)","sampleRate":8000,"channels":1},"customParameters":\#(parameters)},"streamSid":"\#(call.streamSID)"}
            """#))
        return call
    }

    /// Sends `samples` (8 kHz) as μ-law `media` messages of 20 ms each.
    func sendAudio(_ samples: [Int16]) throws {
        var start = 0
        while start < samples.count {
            let chunk = Array(samples[start..<min(start + 160, samples.count)])
            let payload = Base64Codec.encode(G711.encode(chunk, law: .muLaw))
            let number = sequence.next()
            try socket.send(.text(#"{"event":"media","sequenceNumber":"\#(number)","media":{"track":"inbound","chunk":"\#(number)","timestamp":"\#(start / 8)","payload":"\#(payload)"},"streamSid":"\#(streamSID)"}"#))
            start += 160
        }
    }

    /// Sends a key press.
    func press(_ digit: String) throws {
        try socket.send(.text(#"{"event":"dtmf","streamSid":"\#(streamSID)","sequenceNumber":"\#(sequence.next())","dtmf":{"track":"inbound_track","digit":"\#(digit)"}}"#))
    }

    /// Ends the stream as Twilio does when the caller hangs up.
    func hangUp() throws {
        try socket.send(.text(#"{"event":"stop","sequenceNumber":"\#(sequence.next())","streamSid":"\#(streamSID)","stop":{"accountSid":"AC0123456789abcdef0123456789abcdef","callSid":"\#(callSID)"}}"#))
    }

    /// Waits for the next message with this `event`.
    func next(_ event: String, seconds: Double = 30) async -> JSONValue? {
        await received.first(where: { $0["event"]?.stringValue == event }, seconds: seconds)
    }

    /// Whether the server closes the stream within `seconds`.
    func closes(within seconds: Double = 30) async -> Bool {
        _ = await received.first(where: { _ in false }, seconds: seconds)
        return await received.isClosed
    }

    /// How much of the agent's audio has played: the 8 kHz audio received before the last echoed mark.
    var playedMilliseconds: Int {
        get async {
            let played = await received.all.last { $0["event"]?.stringValue == "played" }
            return Int(((played?["bytes"]?.numberValue ?? 0) / 8).rounded())
        }
    }

    /// The μ-law bytes of every `media` message received so far.
    var receivedAudio: [UInt8] {
        get async throws {
            try await received.all.filter { $0["event"]?.stringValue == "media" }.flatMap { message in
                try Base64Codec.decode(try #require(message["media"]?["payload"]?.stringValue))
            }
        }
    }
}

/// Message sequence numbers, shared by the test and the mark echoes. `@unchecked Sendable`: `value` is guarded by `lock`.
final class SequenceCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func next() -> Int { lock.withLock { value += 1; return value } }
}

/// Caller audio at 8 kHz: quiet line noise and a loud tone standing in for speech.
enum TelephoneAudio {
    static func lineNoise(milliseconds: Int, seed: UInt64 = 7) -> [Int16] {
        var state = seed
        return (0..<milliseconds * 8).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int16(Int(state >> 58) - 32)
        }
    }

    static func speech(milliseconds: Int) -> [Int16] {
        (0..<milliseconds * 8).map { Int16(8_000 * sin(2 * Double.pi * 300 * Double($0) / 8_000) + 3_000 * sin(2 * Double.pi * 1_100 * Double($0) / 8_000)) }
    }

    /// A spoken question: line noise, half a second of "speech", then a pause that ends the turn.
    static func question() -> [Int16] {
        lineNoise(milliseconds: 400) + speech(milliseconds: 600) + lineNoise(milliseconds: 1_200, seed: 11)
    }
}

extension WebSocketConnection {
    /// Whether the peer closes the socket within `seconds` (after that, this side closes it).
    func closes(within seconds: Double = 30) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.waitUntilClosed(); return true }
            group.addTask { (try? await Task.sleep(for: TestDeadline.seconds(seconds))) == nil }
            let closedInTime = await group.next() ?? false
            group.cancelAll()
            if !closedInTime { close() }
            return closedInTime
        }
    }
}
