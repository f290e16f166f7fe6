import Foundation
import ParleyCore
import ParleyLocal
import ParleyNet
import ParleyServer
import ParleyTesting
import Testing

/// `POST /v1/realtime/calls` driven by aiortc (PyPI) as an OpenAI-style WebRTC client, on
/// loopback: a spoken question goes in as Opus on the track, whisper.cpp hears it, the
/// answer comes back as events on the `oai-events` data channel and as Opus audio, which
/// whisper.cpp transcribes again here. Plus the hostile inputs a call must survive.
@Suite(.serialized) struct WebRTCCallTests {
    static let harness = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Conformance/clients/aiortc_harness.py").standardizedFileURL

    @Test func aSpokenQuestionOverWebRTCGetsASpokenAnswer() async throws {
        let (server, recognizer) = try Self.startSpeakingServer()
        defer { Task { await server.stop() } }
        let question = try await Self.writeSpeech("What is the capital of France?", to: server.dataDirectory.appendingPathComponent("question.wav"))
        let answer = server.dataDirectory.appendingPathComponent("answer.wav")

        let result = try await ChildProcess.run(ChildProcess.python, [
            Self.harness.path, "--url", "http://127.0.0.1:\(server.port)/v1/realtime/calls", "--token", server.clientToken(),
            "--secret", server.secret, "--question", question.path, "--answer-out", answer.path,
            "no_audio", "spoken_question", "clear", "flood", "sideband",
        ], deadline: .seconds(400))
        for scenario in ["no_audio", "spoken_question", "clear", "flood", "sideband"] {
            #expect(result.output.contains("ok \(scenario)\n"), "\(scenario):\n\(result.output)")
        }
        let heard = result.output.components(separatedBy: "\n").first { $0.hasPrefix("heard: ") }?.lowercased() ?? ""
        #expect(heard.contains("capital"), "the server heard: \(heard)")

        // What came back on the track is the spoken answer ("Hello from Parley.").
        let received = try WAVFile.read(Data(contentsOf: answer))
        #expect(received.samples.count > received.format.sampleRate / 2, "answer audio: \(received.samples.count) samples")
        var resampler = ProviderFactory.resampler(from: received.format.sampleRate, to: 16_000)
        let transcript = try await recognizer.transcribe(resampler.process(received.samples) + resampler.flush(), isFinal: true)
        #expect(transcript.text.lowercased().contains("hello"), "the answer's audio transcribes as: \(transcript.text)")

        // Every call ended with its peer: the sessions are free again.
        try await Self.await(within: .seconds(30)) { server.app.context.sessions.count == 0 && server.app.context.calls.count == 0 }
    }

    /// Hostile peers beside a good call: malformed and audio-less offers, a flooding data
    /// channel, a peer that sends garbage instead of DTLS and one that never starts it. Each is
    /// refused or ended; the good call's question is still heard and answered without an error.
    @Test func hostilePeersLeaveTheCallBesideThemUnaffected() async throws {
        let (server, _) = try Self.startSpeakingServer { settings in settings.webRTCSetupTimeout = .seconds(8) }
        defer { Task { await server.stop() } }
        let question = try await Self.writeSpeech("What is the capital of France?", to: server.dataDirectory.appendingPathComponent("question.wav"))

        let result = try await ChildProcess.run(ChildProcess.python, [
            Self.harness.path, "--url", "http://127.0.0.1:\(server.port)/v1/realtime/calls", "--token", server.clientToken(),
            "--secret", server.secret, "--question", question.path, "--answer-out", "/dev/null", "hostile_neighbours",
        ], deadline: .seconds(240))
        #expect(result.output.contains("ok hostile_neighbours\n"), "\(result.output)")
        let heard = result.output.components(separatedBy: "\n").first { $0.hasPrefix("heard beside the hostile peers: ") }?.lowercased() ?? ""
        #expect(heard.contains("capital"), "the server heard: \(heard)")
        try await Self.await(within: .seconds(30)) { server.app.context.sessions.count == 0 && server.app.context.calls.count == 0 }
    }

    /// STUN/TURN configuration: the server hands `PARLEY_WEBRTC_ICE_SERVERS` to its web page with
    /// the local token, and a peer with no host candidates (behind a NAT that lets nothing else
    /// through) reaches the call through coturn's relay with them: the question is answered.
    @Test(.enabled(if: TURNServerProcess.available)) func aCallThroughATURNRelayIsAnswered() async throws {
        let turn = try TURNServerProcess.start()
        defer { turn.stop() }
        let (server, _) = try Self.startSpeakingServer { settings in settings.webRTCICEServers = [turn.iceServer] }
        defer { Task { await server.stop() } }
        let question = try await Self.writeSpeech("What is the capital of France?", to: server.dataDirectory.appendingPathComponent("question.wav"))

        // The page's token comes with the servers to use.
        let tokenResponse = try await HTTPClient.shared.send(HTTPClient.Request(
            url: server.baseURL.appendingPathComponent("/v1/local/token"), method: "POST", headers: [:], body: Data()
        ))
        let token = try #require(try JSONSerialization.jsonObject(with: tokenResponse.body) as? [String: Any], "\(tokenResponse.status)")
        let iceServers = try #require(token["ice_servers"] as? [[String: Any]])
        #expect(iceServers.count == 1 && (iceServers.first?["urls"] as? [String]) == turn.iceServer.urls && iceServers.first?["credential"] as? String == turn.iceServer.credential)

        let result = try await ChildProcess.run(ChildProcess.python, [
            Self.harness.path, "--url", "http://127.0.0.1:\(server.port)/v1/realtime/calls", "--token", try #require(token["value"] as? String),
            "--secret", server.secret, "--question", question.path, "--answer-out", "/dev/null",
            "--ice-servers", String(decoding: try JSONSerialization.data(withJSONObject: iceServers), as: UTF8.self), "relayed",
        ], deadline: .seconds(180))
        #expect(result.output.contains("ok relayed\n"), "\(result.output)")
        let heard = result.output.components(separatedBy: "\n").first { $0.hasPrefix("heard through the relay: ") }?.lowercased() ?? ""
        #expect(heard.contains("capital"), "the server heard: \(heard)")
        try await Self.await(within: .seconds(30)) { server.app.context.sessions.count == 0 && server.app.context.calls.count == 0 }
    }

    /// The web page's own call (its CallSocket, with the servers handed over with its token) from
    /// headless Chromium, allowed only a TURN relay (coturn on loopback): heard and answered.
    @Test(.enabled(if: TURNServerProcess.available)) func thePagesCallThroughATURNRelayInChromium() async throws {
        let turn = try TURNServerProcess.start()
        defer { turn.stop() }
        let (server, _) = try Self.startSpeakingServer { settings in settings.webRTCICEServers = [turn.iceServer] }
        defer { Task { await server.stop() } }
        let speechFile = try await Self.writeSpeech("What is the capital of France?", thenSilenceSeconds: 3, to: server.dataDirectory.appendingPathComponent("question.wav"))
        let result = try await ChildProcess.run(ChildProcess.python, [
            Self.harness.deletingLastPathComponent().appendingPathComponent("chromium_webrtc_harness.py").path,
            "--url", "http://127.0.0.1:\(server.port)", "--token", "", "--wav", speechFile.path, "--relay",
        ], deadline: .seconds(180))
        #expect(result.output.contains("ok chromium relayed\n"), "\(result.output)")
    }

    /// Headless Chromium asks, hears the answer, barges in, then floods the data channel: the
    /// flood is refused and the call still answers a later event.
    @Test func chromiumAsksOverWebRTCHearsTheAnswerAndBargesIn() async throws {
        let (server, _) = try Self.startSpeakingServer()
        defer { Task { await server.stop() } }
        // Chromium loops the file: the request, 3 s of silence (the answer starts), the request again (barge-in).
        let speechFile = try await Self.writeSpeech("Please tell me a long story.", thenSilenceSeconds: 3, to: server.dataDirectory.appendingPathComponent("long-story.wav"))
        let result = try await ChildProcess.run(ChildProcess.python, [
            Self.harness.deletingLastPathComponent().appendingPathComponent("chromium_webrtc_harness.py").path,
            "--url", "http://127.0.0.1:\(server.port)", "--token", server.clientToken(), "--wav", speechFile.path,
        ], deadline: .seconds(180))
        #expect(result.output.contains("ok chromium\n"), "\(result.output)")
        try await Self.await(within: .seconds(30)) { server.app.context.sessions.count == 0 }
    }

    @Test func hostileRequestsAreRefusedWithClearErrors() async throws {
        let server = try TestServer.start()
        defer { Task { await server.stop() } }
        let token = server.clientToken()
        let cases: [(body: String, contentType: String, token: String?, status: Int, says: String)] = [
            ("not an offer", "application/sdp", token, 400, "malformed line"),
            ("", "application/sdp", token, 400, "not an SDP offer"),
            (Self.offer.replacingOccurrences(of: "m=audio", with: "m=video"), "application/sdp", token, 400, "no audio section"),
            (Self.offer, "application/json", token, 415, "Send the offer as"),
            (Self.offer, "application/sdp", nil, 401, "client token"),
            (Self.offer, "application/sdp", "forged", 401, "client token"),
            ("--b\r\nContent-Disposition: form-data; name=\"session\"\r\n\r\n{}\r\n--b--\r\n", "multipart/form-data; boundary=b", token, 400, "no 'sdp' part"),
            (Self.multipart(session: #"{"type":"realtime","audio":{"output":{"speed":99}}}"#), "multipart/form-data; boundary=b", token, 400, "session"),
        ]
        for item in cases {
            let response = try await Self.post(server, body: item.body, contentType: item.contentType, token: item.token)
            #expect(response.status == item.status, "\(item.says): \(response.status) \(response.text)")
            #expect(response.text.contains(item.says), "\(item.status): \(response.text)")
        }
        // A good offer as multipart with session settings is answered.
        let answered = try await Self.post(server, body: Self.multipart(session: #"{"type":"realtime","instructions":"Be brief."}"#), contentType: "multipart/form-data; boundary=b", token: token)
        #expect(answered.status == 201 && answered.text.contains("a=ice-lite"), "\(answered.status) \(answered.text)")
        #expect(answered.headers["location"]?.hasPrefix("/v1/realtime/calls/rtc_") == true)
        #expect(answered.headers["access-control-expose-headers"] == "Location")
    }

    @Test func callsCountTowardTheSessionLimitAndAPeerThatNeverConnectsIsEnded() async throws {
        let server = try TestServer.start { settings in
            settings.maximumSessions = 1
            settings.webRTCSetupTimeout = .seconds(1)
        }
        defer { Task { await server.stop() } }
        // A peer that posts an offer and never does ICE or DTLS holds the one session...
        let first = try await Self.post(server, body: Self.offer, contentType: "application/sdp", token: server.clientToken())
        #expect(first.status == 201, "\(first.text)")
        let refused = try await Self.post(server, body: Self.offer, contentType: "application/sdp", token: server.clientToken())
        #expect(refused.status == 503 && refused.text.contains("too_many_sessions"), "\(refused.status) \(refused.text)")
        // ...until its setup time runs out: the call ends and frees everything.
        try await Self.await(within: .seconds(20)) { server.app.context.sessions.count == 0 && server.app.context.calls.count == 0 }
        let again = try await Self.post(server, body: Self.offer, contentType: "application/sdp", token: server.clientToken())
        #expect(again.status == 201, "\(again.text)")
    }

    @Test func aCallWhosePeerVanishesEndsAndFreesEverything() async throws {
        let server = try TestServer.start { settings in settings.webRTCSilenceTimeout = .seconds(2) }
        defer { Task { await server.stop() } }
        let question = server.dataDirectory.appendingPathComponent("silence.wav")
        try FileManager.default.createDirectory(at: server.dataDirectory, withIntermediateDirectories: true)
        try WAVFile.pcm16Data(samples: [Int16](repeating: 0, count: 8_000), format: AudioFormat(sampleRate: 16_000)).write(to: question)
        let result = try await ChildProcess.run(ChildProcess.python, [
            Self.harness.path, "--url", "http://127.0.0.1:\(server.port)/v1/realtime/calls", "--token", server.clientToken(),
            "--secret", server.secret, "--question", question.path, "--answer-out", "/dev/null", "vanish",
        ], deadline: .seconds(60))
        #expect(result.output.contains("ok vanish"), "\(result.output)")
        // The harness is gone and said nothing; the server notices the silence and ends the call.
        try await Self.await(within: .seconds(20)) { server.app.context.sessions.count == 0 && server.app.context.calls.count == 0 }
    }

    // MARK: Helpers

    /// An offer as aiortc writes it (the peer behind it never answers).
    static let offer = [
        "v=0", "o=- 1 1 IN IP4 0.0.0.0", "s=-", "t=0 0", "a=group:BUNDLE 0 1",
        "m=audio 9 UDP/TLS/RTP/SAVPF 96", "c=IN IP4 127.0.0.1", "a=mid:0", "a=rtcp-mux", "a=rtpmap:96 opus/48000/2",
        "a=ice-ufrag:Jczz", "a=ice-pwd:kynDr6ZNayK01wPbK7NMZy",
        "a=fingerprint:sha-256 " + (0..<32).map { String(format: "%02X", $0) }.joined(separator: ":"), "a=setup:actpass",
        "m=application 9 UDP/DTLS/SCTP webrtc-datachannel", "a=mid:1", "a=sctp-port:5000",
    ].joined(separator: "\r\n") + "\r\n"

    /// A server on the embedded recognizer and VAD that answers in flite's voice (the words come
    /// from `KeywordLanguageModel`), with its data directory made; and its recognizer.
    static func startSpeakingServer(
        configure: (inout ServerSettings) -> Void = { _ in }
    ) throws -> (TestServer, any SpeechRecognizer) {
        let recognizer = try ProviderFactory.recognizer(ServerSettings()).recognizer
        let server = try TestServer.start(providers: ProviderSet(
            recognizer: recognizer, languageModel: KeywordLanguageModel(), synthesizer: try FliteSpeechSynthesizer(),
            makeVoiceActivityDetector: ProviderFactory.voiceActivityDetector(ServerSettings()).make,
            makeResampler: ProviderFactory.resampler(from:to:)
        ), configure: configure)
        try FileManager.default.createDirectory(at: server.dataDirectory, withIntermediateDirectories: true)
        return (server, recognizer)
    }

    /// Writes `text` as flite says it (then `thenSilenceSeconds` of silence) to a WAV file at `url`.
    static func writeSpeech(_ text: String, thenSilenceSeconds: Int = 0, to url: URL) async throws -> URL {
        let synthesizer = try FliteSpeechSynthesizer()
        var speech: [Int16] = []
        for try await chunk in synthesizer.synthesize(text, options: SpeechOptions()) { speech += chunk }
        speech += [Int16](repeating: 0, count: synthesizer.sampleRate * thenSilenceSeconds)
        try WAVFile.pcm16Data(samples: speech, format: AudioFormat(sampleRate: synthesizer.sampleRate, channelCount: 1)).write(to: url)
        return url
    }

    static func multipart(session: String) -> String {
        "--b\r\nContent-Disposition: form-data; name=\"sdp\"\r\n\r\n\(offer)\r\n"
            + "--b\r\nContent-Disposition: form-data; name=\"session\"\r\nContent-Type: application/json\r\n\r\n\(session)\r\n--b--\r\n"
    }

    struct Reply {
        var status: Int
        /// Lower-cased names.
        var headers: [String: String]
        var text: String
    }

    static func post(_ server: TestServer, body: String, contentType: String, token: String?) async throws -> Reply {
        try await post(baseURL: server.baseURL, body: body, contentType: contentType, token: token)
    }

    /// Posts an offer to the server at `baseURL` (a test server, or a `parley serve` process).
    static func post(baseURL: URL, query: String = "", body: String, contentType: String, token: String?) async throws -> Reply {
        var headers = ["Content-Type": contentType]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        let url = try #require(URL(string: baseURL.appendingPathComponent("/v1/realtime/calls").absoluteString + query))
        let response = try await HTTPClient.shared.send(HTTPClient.Request(url: url, method: "POST", headers: headers, body: Data(body.utf8)))
        return Reply(status: response.status, headers: response.headers, text: String(decoding: response.body, as: UTF8.self))
    }

    /// Waits until `condition` holds, checking every 50 ms, failing after `limit`.
    static func await(within limit: Duration, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("the condition did not hold within \(limit)")
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}
