import Foundation
import ParleyCore
import ParleyNet
import ParleyServer
import ParleyTesting
import Testing

/// Call recordings through a real server: the user on the left channel, the agent on the
/// right, on the clock of the user's audio; the agent cut where the user barged in; nothing
/// written for agents with recordings off; deleted with the conversation; served with Range.
@Suite("Recordings")
struct RecordingTests {
    /// Frames per second of a recording and of the audio the tests send.
    static let rate = 24_000

    @Test("both sides on their own channel, each within 20 ms of when it was said or heard (push-to-talk)")
    func channelsAndAlignment() async throws {
        let server = try TestServer.start()
        defer { Task { await server.stop() } }
        let (conversationID, client) = try await Self.connect(server, agent: #"{"name":"Recorded","recordings":true}"#)
        try client.send(#"{"type":"session.update","session":{"type":"realtime","audio":{"input":{"turn_detection":null}}}}"#)
        _ = await client.next("session.updated")

        // 0.5 s quiet, 1 s of the user's 1 kHz tone, 0.5 s quiet; then the turn is committed.
        try Self.send(Self.quiet(ms: 500) + Self.tone(ms: 1_000) + Self.quiet(ms: 500), to: client)
        try client.send(#"{"type":"input_audio_buffer.commit"}"#)
        try client.send(#"{"type":"response.create"}"#)
        // No audio goes out until the reply's first audio arrives: it plays from 2.0 s.
        #expect(await client.next("response.output_audio.delta") != nil)
        #expect(await client.next("response.done") != nil)
        // The next push-to-talk turn: a click, after the 300 ms reply was heard (at 2.3 s).
        try Self.send(Self.tone(ms: 50) + Self.quiet(ms: 950), to: client)
        client.socket.close(code: 1000, reason: "done")
        await server.app.context.recordings.waitUntilWritten(conversationID: conversationID)

        let recording = try await Self.download(server, conversationID: conversationID)
        let (left, right) = Self.channels(recording)
        #expect(abs(Self.onsets(left).first.map { $0 - 500 } ?? 9_999) <= 20, "user tone onsets \(Self.onsets(left))")
        #expect(Self.onsets(left).dropFirst().first.map { abs($0 - 2_300) <= 20 } == true, "user click onsets \(Self.onsets(left))")
        // The agent's scripted speech (a 440 Hz tone) starts when it was sent: at 2.0 s of the user's audio.
        #expect(abs((Self.onsets(right).first ?? 9_999) - 2_000) <= 20, "agent onsets \(Self.onsets(right))")
        // Each side only on its channel.
        #expect(Self.loudFrames(right, from: 0, to: 2_000) == 0, "the user's tone leaked into the agent's channel")
        #expect(Self.loudFrames(left, from: 2_000, to: 2_300) == 0, "the agent's speech leaked into the user's channel")
        #expect(Self.loudFrames(right, from: 2_000, to: 2_300) > 5_000)
        #expect(Self.loudFrames(right, from: 2_300, to: 3_300) == 0)
        #expect(left.count == right.count && left.count >= 3 * Self.rate)
    }

    @Test("the agent's audio stops where the user barged in, though much more was sent")
    func truncatedAtBargeIn() async throws {
        let providers = ProviderSet(
            recognizer: FixedSpeechRecognizer(text: "tell me a long story"), languageModel: KeywordLanguageModel(),
            synthesizer: ScriptedSpeechSynthesizer(millisecondsPerWord: 100),
            makeVoiceActivityDetector: { EnergyVAD() },
            makeResampler: { from, to in try! LinearResampler(from: from, to: to) }
        )
        let server = try TestServer.start(providers: providers)
        defer { Task { await server.stop() } }
        let (conversationID, client) = try await Self.connect(server, agent: #"{"name":"Storyteller","recordings":true}"#)
        _ = await client.next("session.created")

        // Server VAD: the turn ends after 300 ms of quiet; the reply starts soon after.
        try Self.send(Self.quiet(ms: 500) + Self.tone(ms: 1_000) + Self.quiet(ms: 600), to: client)
        // Seconds of the story are sent (faster than it plays) before the user has heard 1 s of
        // it: more than the user can hear before the cut (the reply starts at 2 s of the call and
        // is cut by 3.1 + 1.6 s)...
        var receivedMs = 0
        while receivedMs < 3_300, let delta = await client.next("response.output_audio.delta") {
            receivedMs += (delta["delta"]?.stringValue.flatMap { Data(base64Encoded: $0) }?.count ?? 0) / 2 * 1000 / Self.rate
        }
        #expect(receivedMs >= 3_300, "the reply stopped after \(receivedMs) ms")
        // ... then the user talks over it until the call ends.
        try Self.send(Self.quiet(ms: 1_000), to: client)
        try Self.send(Self.tone(ms: 1_500), to: client)
        let done = await client.next("response.done")
        #expect(done?["response"]?["status"]?.stringValue == "cancelled")
        try Self.send(Self.tone(ms: 200), to: client)
        client.socket.close(code: 1000, reason: "done")
        await server.app.context.recordings.waitUntilWritten(conversationID: conversationID)

        let sentMs = await client.events.filter { $0["type"]?.stringValue == "response.output_audio.delta" }
            .compactMap { $0["delta"]?.stringValue.flatMap { Data(base64Encoded: $0) }?.count }
            .reduce(0, +) / 2 * 1000 / Self.rate
        let (left, right) = Self.channels(try await Self.download(server, conversationID: conversationID))
        let agentStart = try #require(Self.onsets(right).first)
        let userBargeIn = try #require(Self.onsets(left).dropFirst().first)
        let agentEnd = Self.lastLoudMs(right)
        #expect((1_800...2_200).contains(agentStart), "the reply started at \(agentStart) ms")
        #expect(abs(userBargeIn - 3_100) <= 20, "the user came in at \(userBargeIn) ms, not 3100")
        // Cut once the interruption is decided — when the words of speech longer than a
        // backchannel may be are known (InterruptionPolicy), which with audio sent faster than
        // real time can be as late as the end of the 1.5 s of speech — never before the user
        // came in.
        let decidedWithinMs = 1_500 + 100
        #expect(agentEnd >= userBargeIn - 20 && agentEnd <= userBargeIn + decidedWithinMs, "agent audio ends at \(agentEnd) ms, the user came in at \(userBargeIn) ms")
        #expect(sentMs >= agentEnd - agentStart + 500, "the server sent \(sentMs) ms; the recording should hold only what was heard")

        let items = try await server.request("GET", "/v1/conversations/\(conversationID)/items")
        #expect(items.body["data"]?.arrayElements?.contains { $0["interrupted"]?.boolValue == true } == true)
    }

    @Test("no file for an agent with recordings off, even with PARLEY_RECORDINGS on")
    func nothingWhenOff() async throws {
        let server = try TestServer.start { $0.recordsCalls = true }
        defer { Task { await server.stop() } }
        let (offID, off) = try await Self.connect(server, agent: #"{"name":"Private","recordings":false}"#)
        try await Self.talk(off)
        await server.app.context.recordings.waitUntilWritten(conversationID: offID)
        #expect(try await server.request("GET", "/v1/conversations/\(offID)/recording").status == 404)

        // The server default applies to an agent that does not say.
        let (defaultID, byDefault) = try await Self.connect(server, agent: #"{"name":"Default"}"#)
        try await Self.talk(byDefault)
        await server.app.context.recordings.waitUntilWritten(conversationID: defaultID)
        #expect(try await server.request("GET", "/v1/conversations/\(defaultID)/recording").status == 200)

        let files = try FileManager.default.contentsOfDirectory(atPath: server.dataDirectory.appendingPathComponent("recordings").path)
        #expect(files == ["\(defaultID).wav"])
    }

    @Test("listed, served whole and by Range as audio/wav behind the server secret, and deleted with the conversation")
    func servedAndDeleted() async throws {
        let server = try TestServer.start()
        defer { Task { await server.stop() } }
        let (conversationID, client) = try await Self.connect(server, agent: #"{"name":"Recorded","recordings":true}"#)
        try await Self.talk(client)
        await server.app.context.recordings.waitUntilWritten(conversationID: conversationID)
        let path = "/v1/conversations/\(conversationID)/recording"

        #expect(try await server.request("GET", path, token: .some(nil)).status == 401)
        #expect(try await server.request("GET", path, token: .some(server.clientToken())).status == 403)
        let list = try await server.request("GET", "/v1/recordings")
        let listed = try #require(list.body["data"]?.arrayElements?.first)
        #expect(listed["conversation_id"]?.stringValue == conversationID)
        #expect(listed["url"]?.stringValue == path)

        let whole = try await Self.get(server, path)
        #expect(whole.status == 200)
        #expect(whole.headers["content-type"] == "audio/wav")
        #expect(whole.headers["accept-ranges"] == "bytes")
        let wav = try WAVFile.read(whole.body)
        #expect(wav.format == AudioFormat(sampleRate: Self.rate, channelCount: 2))
        #expect(listed["bytes"]?.numberValue.map(Int.init) == whole.body.count)

        let part = try await Self.get(server, path, range: "bytes=44-1043")
        #expect(part.status == 206)
        #expect(part.headers["content-range"] == "bytes 44-1043/\(whole.body.count)")
        #expect(part.body == whole.body[44..<1044])
        let tail = try await Self.get(server, path, range: "bytes=-100")
        #expect(tail.body == whole.body.suffix(100))
        #expect(try await Self.get(server, path, range: "bytes=\(whole.body.count)-").status == 416)
        // Ranges this server does not serve (several, malformed, backwards) get the whole file.
        for ignored in ["bytes=0-1,5-6", "bytes=abc", "bytes=9-2", "items=0-5", "bytes=-"] {
            let response = try await Self.get(server, path, range: ignored)
            #expect(response.status == 200 && response.body == whole.body, "Range: \(ignored)")
        }

        let file = server.dataDirectory.appendingPathComponent("recordings/\(conversationID).wav")
        #expect(FileManager.default.fileExists(atPath: file.path))
        let deleted = try await server.request("DELETE", "/v1/conversations/\(conversationID)")
        #expect(deleted.status == 200)
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(try await server.request("GET", path).status == 404)
        #expect(try await server.request("GET", "/v1/conversations/\(conversationID)/items").status == 404)
        #expect(try await server.request("DELETE", "/v1/conversations/\(conversationID)").status == 404)
    }

    @Test("deleting a conversation during its call ends the call and leaves no file behind")
    func deletedDuringTheCall() async throws {
        let server = try TestServer.start()
        defer { Task { await server.stop() } }
        let (conversationID, client) = try await Self.connect(server, agent: #"{"name":"Recorded","recordings":true}"#)
        _ = await client.next("session.created")
        try Self.send(Self.quiet(ms: 300), to: client)
        #expect(try await server.request("DELETE", "/v1/conversations/\(conversationID)").status == 200)
        #expect(await client.closes(within: 10))
        await server.app.context.recordings.waitUntilWritten(conversationID: conversationID)
        #expect(!FileManager.default.fileExists(atPath: server.dataDirectory.appendingPathComponent("recordings/\(conversationID).wav").path))
    }

    @Test("a conversation id that is no file name (dots, spaces, non-ASCII) is recorded under a safe name and found by its id")
    func hostileConversationID() async throws {
        let server = try TestServer.start()
        defer { Task { await server.stop() } }
        let created = try await server.request("POST", "/v1/agents", json: #"{"name":"Recorded","recordings":true}"#)
        let agentID = try #require(created.body["id"]?.stringValue)
        let conversationID = "..call 7 (ü).x"
        let instance = try await server.request("POST", "/v1/agents/\(agentID)/instances", json: #"{"user":"ada","conversation_id":"\#(conversationID)"}"#)
        let instanceID = try #require(instance.body["id"]?.stringValue)
        try await Self.talk(try await RealtimeTestClient.connect(server, query: "?instance=\(instanceID)"))
        await server.app.context.recordings.waitUntilWritten(conversationID: conversationID)

        let files = try FileManager.default.contentsOfDirectory(atPath: server.dataDirectory.appendingPathComponent("recordings").path)
        #expect(files.count == 1 && files[0].hasPrefix("~") && !files[0].contains("/"))
        let listed = try #require(try await server.request("GET", "/v1/recordings").body["data"]?.arrayElements?.first)
        #expect(listed["conversation_id"]?.stringValue == conversationID)
        let url = try #require(listed["url"]?.stringValue)
        let response = try await HTTPClient.shared.send(HTTPClient.Request(
            url: try #require(URL(string: "http://127.0.0.1:\(server.port)\(url)")), headers: ["Authorization": "Bearer \(server.secret)"]
        ))
        #expect(response.status == 200)
        #expect(try WAVFile.read(response.body).format.channelCount == 2)
    }

    // MARK: - Helpers

    /// Creates `agent`, an instance of it, and connects; returns the conversation id and the client.
    static func connect(_ server: TestServer, agent: String) async throws -> (String, RealtimeTestClient) {
        let created = try await server.request("POST", "/v1/agents", json: agent)
        let agentID = try #require(created.body["id"]?.stringValue)
        let instance = try await server.request("POST", "/v1/agents/\(agentID)/instances", json: #"{"user":"ada"}"#)
        let instanceID = try #require(instance.body["id"]?.stringValue)
        let conversationID = try #require(instance.body["conversation_id"]?.stringValue)
        return (conversationID, try await RealtimeTestClient.connect(server, query: "?instance=\(instanceID)"))
    }

    /// One spoken turn and its reply, then the end of the call.
    static func talk(_ client: RealtimeTestClient) async throws {
        try send(quiet(ms: 300) + tone(ms: 800) + quiet(ms: 600), to: client)
        #expect(await client.next("response.done") != nil)
        try send(quiet(ms: 500), to: client)
        client.socket.close(code: 1000, reason: "done")
    }

    static func send(_ samples: [Int16], to client: RealtimeTestClient) throws {
        for start in stride(from: 0, to: samples.count, by: rate / 10) {
            let chunk = PCM16Buffer(samples: Array(samples[start..<min(start + rate / 10, samples.count)]))
            try client.send(#"{"type":"input_audio_buffer.append","audio":"\#(chunk.base64EncodedString())"}"#)
        }
    }

    /// Faint noise: what the energy VAD learns its floor from.
    static func quiet(ms: Int) -> [Int16] {
        var generator = SystemRandomNumberGenerator()
        return (0..<(ms * rate / 1000)).map { _ in Int16.random(in: -40...40, using: &generator) }
    }

    /// A loud 1 kHz tone: the user talking.
    static func tone(ms: Int) -> [Int16] {
        (0..<(ms * rate / 1000)).map { Int16(8_000 * sin(2 * Double.pi * 1_000 * Double($0) / Double(rate))) }
    }

    static func download(_ server: TestServer, conversationID: String) async throws -> WAVFile {
        let response = try await get(server, "/v1/conversations/\(conversationID)/recording")
        try #require(response.status == 200)
        return try WAVFile.read(response.body)
    }

    static func get(_ server: TestServer, _ path: String, range: String? = nil) async throws -> HTTPClient.Response {
        var headers = ["Authorization": "Bearer \(server.secret)"]
        if let range { headers["Range"] = range }
        return try await HTTPClient.shared.send(HTTPClient.Request(url: server.baseURL.appendingPathComponent(path), method: "GET", headers: headers))
    }

    static func channels(_ wav: WAVFile) -> (left: [Float], right: [Float]) {
        let frames = wav.samples.count / 2
        return ((0..<frames).map { wav.samples[2 * $0] }, (0..<frames).map { wav.samples[2 * $0 + 1] })
    }

    /// Where sound starts after at least 100 ms of quiet, in milliseconds.
    static func onsets(_ channel: [Float]) -> [Int] {
        var onsets: [Int] = []
        var lastLoud = -rate
        for (index, sample) in channel.enumerated() where abs(sample) > 0.03 {
            if index - lastLoud > rate / 10 { onsets.append(index * 1000 / rate) }
            lastLoud = index
        }
        return onsets
    }

    static func lastLoudMs(_ channel: [Float]) -> Int {
        (channel.lastIndex { abs($0) > 0.03 } ?? 0) * 1000 / rate
    }

    static func loudFrames(_ channel: [Float], from startMs: Int, to endMs: Int) -> Int {
        channel[min(channel.count, startMs * rate / 1000)..<min(channel.count, endMs * rate / 1000)].filter { abs($0) > 0.03 }.count
    }
}
