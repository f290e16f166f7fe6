import Foundation
import ParleyCore
import ParleyNet
@testable import ParleyServer
import Testing

/// The pieces of the Twilio door, as tables: the request signature, form bodies, TwiML, the
/// Media Streams messages, what the caller heard from echoed marks, and the echo gate.
@Suite struct TwilioProtocolTests {
    @Test func theSignatureMatchesTwiliosDocumentedExample() {
        // Twilio's security documentation: this URL, these parameters and auth token 12345.
        let parameters = [("CallSid", "CA1234567890ABCDE"), ("Caller", "+12349013030"), ("Digits", "1234"), ("From", "+12349013030"), ("To", "+18005551212")]
            .map { (name: $0.0, value: $0.1) }
        let url = "https://mycompany.com/myapp.php?foo=1&bar=2"
        #expect(TwilioSignature.expected(url: url, parameters: parameters, authToken: "12345") == "0/KCTR6DLpKmkAf8muzZqo1nDgQ=")
        // The order the parameters arrive in does not matter; their values and the URL do.
        #expect(TwilioSignature.isValid("0/KCTR6DLpKmkAf8muzZqo1nDgQ=", url: url, parameters: parameters.reversed(), authToken: "12345"))
        #expect(!TwilioSignature.isValid("0/KCTR6DLpKmkAf8muzZqo1nDgQ=", url: url + "&baz=3", parameters: parameters, authToken: "12345"))
        #expect(!TwilioSignature.isValid("", url: url, parameters: parameters, authToken: "12345"))
    }

    @Test func formBodiesDecodePlusAndPercentEscapes() {
        let pairs = FormURLEncoded.parameters(Data("From=%2B14155550100&CallerName=Ada+Lovelace&Empty=&Flag&Bad=%zz".utf8))
        #expect(pairs.map(\.name) == ["From", "CallerName", "Empty", "Flag", "Bad"])
        #expect(pairs.map(\.value) == ["+14155550100", "Ada Lovelace", "", "", "%zz"])
    }

    @Test func theSignedURLIsThePublicURLWithThePathAndQuery() {
        var settings = TelephonySettings()
        let request = HTTPRequest(method: "POST", path: "/v1/telephony/twilio/voice", query: ["agent": "agent_1"], headers: ["Host": "10.0.0.5:8080"])
        #expect(TwilioVoiceWebhook.signedURL(of: request, settings: settings) == "https://10.0.0.5:8080/v1/telephony/twilio/voice?agent=agent_1")
        #expect(TwilioVoiceWebhook.streamURL(of: request, settings: settings) == "wss://10.0.0.5:8080/v1/telephony/twilio/stream")
        settings.publicURL = URL(string: "https://voice.example.com/")
        #expect(TwilioVoiceWebhook.signedURL(of: request, settings: settings) == "https://voice.example.com/v1/telephony/twilio/voice?agent=agent_1")
        #expect(TwilioVoiceWebhook.streamURL(of: request, settings: settings) == "wss://voice.example.com/v1/telephony/twilio/stream")
        let local = HTTPRequest(method: "POST", path: "/v1/telephony/twilio/voice", headers: ["Host": "127.0.0.1:8080"])
        #expect(TwilioVoiceWebhook.streamURL(of: local, settings: TelephonySettings()) == "ws://127.0.0.1:8080/v1/telephony/twilio/stream")
    }
}

extension TwilioProtocolTests {
    @Test func theTwiMLConnectsABidirectionalStreamWithTheTokenAsAParameter() {
        let twiML = TwilioVoiceWebhook.twiML(
            streamURL: "wss://voice.example.com/v1/telephony/twilio/stream", token: "a&b\"c",
            actionURL: "https://voice.example.com/v1/telephony/twilio/stream-ended"
        )
        #expect(twiML.hasPrefix(#"<?xml version="1.0" encoding="UTF-8"?>"#))
        #expect(twiML.contains(#"<Response><Connect action="https://voice.example.com/v1/telephony/twilio/stream-ended"><Stream url="wss://voice.example.com/v1/telephony/twilio/stream"><Parameter name="parley_token" value="a&amp;b&quot;c"/></Stream></Connect></Response>"#))
    }

    @Test(arguments: [
        (#"{"event":"connected","protocol":"Call","version":"1.0.0"}"#, TwilioInboundMessage.connected),
        (#"{"event":"media","sequenceNumber":"3","media":{"track":"inbound","chunk":"1","timestamp":"5","payload":"/w=="},"streamSid":"MZ1"}"#, .media(track: "inbound", payload: "/w==")),
        (#"{"event":"mark","sequenceNumber":"4","streamSid":"MZ1","mark":{"name":"parley-7"}}"#, .mark(name: "parley-7")),
        (##"{"event":"dtmf","streamSid":"MZ1","sequenceNumber":"5","dtmf":{"track":"inbound_track","digit":"#"}}"##, .dtmf(digit: "#")),
        (#"{"event":"stop","sequenceNumber":"5","streamSid":"MZ1","stop":{"accountSid":"AC1","callSid":"CA1"}}"#, .stop),
        (#"{"event":"transcription","streamSid":"MZ1"}"#, .other(event: "transcription")),
    ])
    func twiliosMessagesDecode(text: String, expected: TwilioInboundMessage) throws {
        #expect(try TwilioInboundMessage.decode(text) == expected)
    }

    @Test func theStartMessageCarriesTheCallAndItsCustomParameters() throws {
        let text = #"{"event":"start","sequenceNumber":"1","start":{"accountSid":"AC1","streamSid":"MZ1","callSid":"CA1","tracks":["inbound"],"mediaFormat":{"encoding":"audio/x-mulaw","sampleRate":8000,"channels":1},"customParameters":{"parley_token":"t0k"}},"streamSid":"MZ1"}"#
        let expected = TwilioStreamStart(
            streamSID: "MZ1", callSID: "CA1", accountSID: "AC1", customParameters: ["parley_token": "t0k"], encoding: "audio/x-mulaw", sampleRate: 8000
        )
        #expect(try TwilioInboundMessage.decode(text) == .start(expected))
        #expect(throws: TwilioInboundMessage.Malformed.self) { try TwilioInboundMessage.decode(#"{"event":"start","start":{"callSid":"CA1"}}"#) }
    }

    @Test func outboundMessagesNameTheStream() throws {
        for (message, expected) in [
            (TwilioOutboundMessage.media(payload: "/w=="), #"{"event":"media","media":{"payload":"/w=="},"streamSid":"MZ1"}"#),
            (.mark(name: "parley-1"), #"{"event":"mark","mark":{"name":"parley-1"},"streamSid":"MZ1"}"#),
            (.clear, #"{"event":"clear","streamSid":"MZ1"}"#),
        ] {
            #expect(try JSONValue(parsing: message.encode(streamSID: "MZ1")) == JSONValue(parsing: expected))
        }
    }

    @Test func echoedMarksSayHowMuchOfEachItemWasHeard() {
        var playback = TwilioPlayback(sampleRate: 24_000)
        #expect(!playback.isPlaying)
        let first = playback.sent(sampleCount: 960, itemID: "item_a")
        let second = playback.sent(sampleCount: 960, itemID: "item_a")
        let third = playback.sent(sampleCount: 960, itemID: "item_a")
        #expect(playback.isPlaying)
        let known = playback.acknowledged(first)
        #expect(known)
        #expect(playback.heardMilliseconds(of: "item_a") == 40)
        // A later mark implies the earlier ones played; unknown and repeated names change nothing.
        let answers = [playback.acknowledged(second), playback.acknowledged(second), playback.acknowledged("parley-999")]
        #expect(answers == [true, false, false])
        #expect(playback.heardMilliseconds(of: "item_a") == 80)
        #expect(playback.clear() == [TwilioPlayback.Cut(itemID: "item_a", heardMs: 80)])
        // Marks Twilio echoes after a clear were never played.
        let afterClear = playback.acknowledged(third)
        #expect(!afterClear)
        #expect(playback.heardMilliseconds(of: "item_a") == 80)
        #expect(!playback.isPlaying)
        #expect(playback.clear().isEmpty)
        // Fully played items are not cut.
        let last = playback.sent(sampleCount: 2_400, itemID: "item_b")
        _ = playback.acknowledged(last)
        #expect(playback.clear().isEmpty)
    }

    @Test(arguments: [
        (-60 as Float, true, true), (-60, false, false), (-30, true, false), (-10, true, false),
    ])
    func theEchoGateSilencesQuietAudioOnlyWhileTheAgentPlays(levelDBFS: Float, agentPlaying: Bool, silenced: Bool) {
        let amplitude = 32_768 * pow(10, Double(levelDBFS) / 20) * 2.squareRoot()
        let samples = (0..<160).map { Int16(amplitude * sin(2 * Double.pi * 400 * Double($0) / 8_000)) }
        let passed = TwilioEchoGate().pass(samples, agentPlaying: agentPlaying)
        #expect(passed == (silenced ? [Int16](repeating: 0, count: 160) : samples))
    }

    @Test func agentPhoneNumbersMustBeE164() {
        #expect(AgentTelephonySettings(phoneNumbers: ["+14155550123", "+442071838750"]).validationProblems().isEmpty)
        #expect(AgentTelephonySettings(phoneNumbers: ["4155550123", "+0123456789", "+1 415 555", "+1234567"]).validationProblems().count == 4)
    }
}

extension TwilioProtocolTests {
    @Test func phoneSettingsComeFromTheEnvironmentAndABadPublicURLIsOneProblem() {
        let (settings, problems) = ServerSettings.load(environment: [
            "PARLEY_PUBLIC_URL": "https://voice.example.com", "PARLEY_TWILIO_AUTH_TOKEN": "0123456789abcdef",
        ])
        #expect(problems.isEmpty)
        #expect(settings.telephony.publicURL == URL(string: "https://voice.example.com"))
        #expect(settings.telephony.twilioAuthToken == "0123456789abcdef")
        let (unset, none) = ServerSettings.load(environment: [:])
        #expect(none.isEmpty && unset.telephony == TelephonySettings())
        let (_, bad) = ServerSettings.load(environment: ["PARLEY_PUBLIC_URL": "voice.example.com"])
        #expect(bad == ["PARLEY_PUBLIC_URL: \"voice.example.com\" is not an http(s) URL such as https://voice.example.com"])
    }
}

extension TwilioProtocolTests {
    @Test(arguments: [
        ("+15005550007", "<Response><Dial>+15005550007</Dial></Response>"),
        ("sip:desk@pbx.example.com", "<Response><Dial><Sip>sip:desk@pbx.example.com</Sip></Dial></Response>"),
    ])
    func aTransferDialsTheTargetOnceTheStreamEnded(target: String, twiML: String) {
        #expect(TwilioStreamEnded.dialTwiML(target).hasSuffix(twiML))
    }
}
