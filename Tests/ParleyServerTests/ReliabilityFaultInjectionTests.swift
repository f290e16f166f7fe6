import Foundation
import ParleyCore
import ParleyNet
import ParleyOpenAI
import ParleyServer
import Testing

/// Every upstream fault, for every provider kind, against a real `ParleyApp` driven over the
/// realtime WebSocket: the client gets a typed error within the configured timeout, the
/// response ends as failed, the next turn works, and nothing is left behind.
@Suite("Reliability: upstream fault injection")
struct ReliabilityFaultInjectionTests {
    /// The provider whose upstream misbehaves.
    enum ProviderKind: String, CaseIterable, CustomStringConvertible, Sendable {
        case transcription = "ASR"
        case languageModel = "LLM"
        case speech = "TTS"

        var description: String { rawValue }
    }

    /// The timeouts and retries the providers run with: short, so stalls end quickly.
    static let timeouts = OpenAITimeouts(firstOutput: .milliseconds(1_500), idle: .seconds(1))
    static let retry = OpenAIRetryPolicy(maxAttempts: 2, initialBackoff: .milliseconds(50), maxBackoff: .milliseconds(100), jitter: 0)
    /// The upstream API key; it must never reach the client.
    static let upstreamKey = "sk-upstream-fault-key-7d1e0c55"

    /// The longest a fault may take to reach the client. It only catches a fault that is never
    /// reported: a loaded machine can run seconds behind what the deadlines add up to (3.1 s),
    /// so that the providers' own deadline fired is checked by the error's message instead.
    static let errorDeadline: Double = 30
    /// What the providers' deadlines say when they fire (first output 1.5 s, idle 1 s); the
    /// transport's backstop timeout says something else.
    static let deadlineMessages = ["no response within 1.5 s", "the response stalled for more than 1 s"]

    @Test("a fault reaches the client as a typed error, the next turn works, nothing leaks", arguments: ProviderKind.allCases, FaultyUpstream.Fault.allCases.filter { $0 != .healthy })
    func faultIsContained(kind: ProviderKind, fault: FaultyUpstream.Fault) async throws {
        try await Self.exercise(kind, fault)
    }

    /// Runs one fault against a fresh server and checks everything the suite promises.
    static func exercise(_ kind: ProviderKind, _ fault: FaultyUpstream.Fault) async throws {
        let upstreams = try FaultyUpstreams()
        defer { upstreams.stop() }
        let server = try TestServer.start(providers: upstreams.providers(key: Self.upstreamKey, timeouts: Self.timeouts, retry: Self.retry))
        let client = try await RealtimeTestClient.connect(server)
        #expect(await client.next("session.created") != nil)
        try client.send(#"{"type":"session.update","session":{"type":"realtime","audio":{"input":{"turn_detection":null}}}}"#)
        #expect(await client.next("session.updated") != nil)
        weak let session = server.app.context.sessions.all.first?.session
        #expect(session != nil)

        try upstreams[kind].set(fault)
        let started = ContinuousClock.now
        let failure = try await FaultTurn.run(kind, client: client, expectFailure: true)
        let elapsed = (ContinuousClock.now - started).elapsedSeconds
        let expected = Self.expectedOutcome(kind, fault)
        #expect(failure.error?["type"]?.stringValue == expected.type, "\(kind) \(fault): \(failure.error?.jsonText ?? "no error event")")
        #expect(failure.error?["code"]?.stringValue == kind.failureCode, "\(kind) \(fault): \(failure.error?.jsonText ?? "no error event")")
        #expect(elapsed < Self.errorDeadline, "\(kind) \(fault): the error took \(elapsed) s")
        if kind != .transcription {
            #expect(failure.responseStatus == "failed", "\(kind) \(fault): response.done status \(failure.responseStatus ?? "missing")")
        }
        let category = Self.reportedCategories(server).joined(separator: ",")
        #expect(category == expected.category, "\(kind) \(fault): reported as \(category)")
        if expected.category == "timeout" {
            let message = failure.error?["message"]?.stringValue ?? ""
            #expect(Self.deadlineMessages.contains { message.contains($0) }, "\(kind) \(fault): not the providers' deadline: \(message)")
        }

        try upstreams[kind].set(.healthy)
        let recovery = try await FaultTurn.run(kind, client: client, expectFailure: false)
        #expect(recovery.succeeded, "\(kind) after \(fault): the next turn failed: \(recovery.error?.jsonText ?? "")")

        let events = await client.events.map(\.jsonText).joined(separator: "\n")
        #expect(!events.contains(Self.upstreamKey), "the upstream key reached the client")

        client.socket.close(code: 1000, reason: "done")
        #expect(await ResourceProbe.eventually(within: 5) { server.app.context.sessions.count == 0 }, "the session outlived its socket")
        #expect(await ResourceProbe.eventually(within: 5) { session == nil }, "\(kind) \(fault): the VoiceSession was never freed")
        #expect(await ResourceProbe.eventually(within: 5) { upstreams.all.allSatisfy { $0.connections == 0 } },
                "\(kind) \(fault): an upstream connection was left open")
        #expect(await ResourceProbe.eventually(within: 5) { upstreams.all.allSatisfy { ResourceProbe.sockets(port: $0.port, remoteOnly: true) == 0 } },
                "\(kind) \(fault): a socket to the upstream is still open in the server")
        await server.stop()
        #expect(await ResourceProbe.eventually(within: 5) { ResourceProbe.sockets(port: server.port) == 0 }, "a socket of the server is still open")
        print("fault-injection\t\(kind)\t\(fault)\t\(String(format: "%.2f", elapsed)) s\t\(failure.error?["code"]?.stringValue ?? "-")\t\(category)\t\(upstreams[kind].requests) requests\tnext turn \(recovery.succeeded ? "ok" : "FAILED")")
    }

    @Test("a session whose upstream stalls is closed mid-request without leaving tasks", arguments: ProviderKind.allCases)
    func closingDuringAStall(kind: ProviderKind) async throws {
        let upstreams = try FaultyUpstreams()
        defer { upstreams.stop() }
        let slow = OpenAITimeouts(firstOutput: .seconds(60), idle: .seconds(60))
        let server = try TestServer.start(providers: upstreams.providers(key: Self.upstreamKey, timeouts: slow, retry: .none))
        let client = try await RealtimeTestClient.connect(server)
        #expect(await client.next("session.created") != nil)
        try client.send(#"{"type":"session.update","session":{"type":"realtime","audio":{"input":{"turn_detection":null}}}}"#)
        #expect(await client.next("session.updated") != nil)
        weak let session = server.app.context.sessions.all.first?.session
        let strongSession = try #require(session)
        try upstreams[kind].set(.stallBeforeFirstByte)
        try FaultTurn.start(kind, client: client)
        #expect(await ResourceProbe.eventually(within: 10) { upstreams[kind].requests > 0 })
        #expect(await strongSession.hasRunningTasks, "the stalled request should be in flight")

        client.socket.close(code: 1000, reason: "bye")
        #expect(await ResourceProbe.eventually(within: 5) { await !strongSession.hasRunningTasks }, "\(kind): a task outlived the session")
        #expect(await ResourceProbe.eventually(within: 5) { upstreams[kind].connections == 0 }, "\(kind): the stalled upstream request was not cancelled")
        _ = consume strongSession
        #expect(await ResourceProbe.eventually(within: 5) { session == nil }, "\(kind): the VoiceSession was never freed")
        await server.stop()
    }

    /// The documented outcome of a fault: the `error.type` the client gets and the
    /// `ProviderError` category the server counts it under.
    static func expectedOutcome(_ kind: ProviderKind, _ fault: FaultyUpstream.Fault) -> (type: String, category: String) {
        switch fault {
        case .healthy: ("none", "none")
        case .connectionRefused, .disconnectMidStream: ("server_error", "connectivity")
        case .unauthorized: ("server_error", "authentication")
        case .rateLimited: ("server_error", "rate_limited")
        case .serverError: ("server_error", "server")
        case .stallBeforeFirstByte, .stallMidStream, .slowTrickle, .trickleAfterFirstOutput: ("server_error", "timeout")
        case .malformedBody:
            switch kind {
            // A JSON body without `text`.
            case .transcription: ("server_error", "server")
            // No chunk decodes (they are skipped, as lenient decoding wants) and no `[DONE]` comes.
            case .languageModel: ("server_error", "connectivity")
            // An HTML body where raw PCM was asked for: the request does not suit that server.
            case .speech: ("invalid_request_error", "invalid_request")
            }
        }
    }

    /// The categories in the server's `parley_errors_total` metric.
    static func reportedCategories(_ server: TestServer) -> [String] {
        server.app.context.metrics.prometheusText().split(separator: "\n").compactMap { line in
            guard line.hasPrefix("parley_errors_total{category=\"") else { return nil }
            return line.split(separator: "\"")[1].description
        }
    }
}

extension ReliabilityFaultInjectionTests.ProviderKind {
    /// The `error.code` the client gets when this provider fails.
    var failureCode: String {
        switch self {
        case .transcription: "transcription_failed"
        case .languageModel: "response_failed"
        case .speech: "speech_failed"
        }
    }
}

/// One upstream per provider kind, so a fault (even a refused port) hits exactly one provider.
struct FaultyUpstreams: Sendable {
    let transcription: FaultyUpstream
    let languageModel: FaultyUpstream
    let speech: FaultyUpstream

    init() throws {
        transcription = try FaultyUpstream()
        languageModel = try FaultyUpstream()
        speech = try FaultyUpstream()
    }

    subscript(kind: ReliabilityFaultInjectionTests.ProviderKind) -> FaultyUpstream {
        switch kind {
        case .transcription: transcription
        case .languageModel: languageModel
        case .speech: speech
        }
    }

    var all: [FaultyUpstream] { [transcription, languageModel, speech] }

    /// The OpenAI providers pointed at these upstreams.
    func providers(key: String, timeouts: OpenAITimeouts, retry: OpenAIRetryPolicy) -> ProviderSet {
        func configuration(_ upstream: FaultyUpstream, model: String) -> OpenAIConfiguration {
            OpenAIConfiguration(baseURL: upstream.baseURL, apiKey: key, model: model, timeouts: timeouts, retry: retry)
        }
        return ProviderSet(
            recognizer: OpenAISpeechRecognizer(configuration: configuration(transcription, model: "whisper-1")),
            languageModel: OpenAILanguageModel(configuration: configuration(languageModel, model: "gpt-4o-mini")),
            synthesizer: OpenAISpeechSynthesizer(configuration: configuration(speech, model: "tts-1")),
            makeVoiceActivityDetector: { EnergyVAD() },
            makeResampler: { from, to in try! LinearResampler(from: from, to: to) }
        )
    }

    func stop() { all.forEach { $0.stop() } }
}

/// One turn that exercises a provider kind: a committed utterance for ASR, a typed message
/// with a spoken response for the LLM and TTS.
enum FaultTurn {
    struct Outcome {
        /// The `error` member of the first error event, if any.
        var error: JSONValue?
        /// `response.done`'s status, for turns that create a response.
        var responseStatus: String?
        /// Whether the turn completed as a healthy one does.
        var succeeded: Bool
    }

    /// Half a second of a quiet tone, 24 kHz pcm16, base64.
    static let utterance: String = {
        let samples = (0..<12_000).map { Int16(3_000 * sin(Double($0) * 2 * .pi * 220 / 24_000)) }
        return PCM16Buffer(format: .realtime, samples: samples).base64EncodedString()
    }()

    /// Sends the events that start a turn of `kind`.
    static func start(_ kind: ReliabilityFaultInjectionTests.ProviderKind, client: RealtimeTestClient) throws {
        switch kind {
        case .transcription:
            try client.send(#"{"type":"input_audio_buffer.append","audio":"\#(utterance)"}"#)
            try client.send(#"{"type":"input_audio_buffer.commit"}"#)
        case .languageModel, .speech:
            try client.send(#"{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"Say hello."}]}}"#)
            try client.send(#"{"type":"response.create"}"#)
        }
    }

    /// Runs a turn and waits for its outcome.
    static func run(_ kind: ReliabilityFaultInjectionTests.ProviderKind, client: RealtimeTestClient, expectFailure: Bool) async throws -> Outcome {
        let earlier = await client.events.count
        try start(kind, client: client)
        let wait = ReliabilityFaultInjectionTests.errorDeadline + 5
        switch kind {
        case .transcription:
            if expectFailure {
                let failed = await client.next("conversation.item.input_audio_transcription.failed", seconds: wait)
                let error = await client.next("error", seconds: 1)
                return Outcome(error: error?["error"] ?? failed?["error"], responseStatus: nil, succeeded: false)
            }
            let completed = await client.next("conversation.item.input_audio_transcription.completed", seconds: wait)
            return Outcome(error: nil, responseStatus: nil, succeeded: completed?["transcript"]?.stringValue == FaultyUpstream.transcript)
        case .languageModel, .speech:
            guard let done = await client.next("response.done", seconds: wait) else { return Outcome(error: nil, responseStatus: nil, succeeded: false) }
            let status = done["response"]?["status"]?.stringValue
            let events = await client.events.dropFirst(earlier)
            let error = events.last { $0["type"]?.stringValue == "error" }?["error"]
            let heardAudio = events.contains { $0["type"]?.stringValue == "response.output_audio.delta" }
            let transcript = events.last { $0["type"]?.stringValue == "response.output_audio_transcript.done" }?["transcript"]?.stringValue
            return Outcome(
                error: expectFailure ? error : nil, responseStatus: status,
                succeeded: status == "completed" && heardAudio && transcript == FaultyUpstream.reply
            )
        }
    }
}

extension Duration {
    /// The duration in seconds.
    var elapsedSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
