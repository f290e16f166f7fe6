import Foundation
import ParleyCore
import ParleyNet

/// A real OpenAI-compatible HTTP server on a loopback port that answers from scripts, for tests
/// and benchmarks of the OpenAI providers.
///
/// Serves `/v1/chat/completions` (`FakeChatScript`: streamed text, tool-call fragments, usage,
/// error statuses, in-stream errors, stalls, disconnects, malformed chunks, fixed timing),
/// `/v1/audio/transcriptions` (`FakeTranscriptionScript`) and `/v1/audio/speech`
/// (`FakeSpeechScript`). Scripts are used in the order they were queued, one per request; when
/// none is left, a chat or speech responder (if set) writes one from the request, else the
/// fallback answers (or a 500). Every request is recorded, and every client
/// that goes away before its response ended is counted.
///
/// ```swift
/// let server = try FakeOpenAIServer()
/// server.enqueueChat(.text(["Hel", "lo"]))
/// let model = OpenAILanguageModel(configuration: .init(baseURL: server.baseURL, model: "fake"))
/// ```
public final class FakeOpenAIServer: Sendable {
    /// A request the server received.
    public struct RecordedRequest: Sendable {
        /// The method, for example `POST`.
        public var method: String
        /// The path, for example `/v1/chat/completions`.
        public var path: String
        /// Header fields with lowercased names.
        public var headers: [String: String]
        /// The body.
        public var body: Data

        /// The body parsed as JSON, if it is JSON.
        public var json: JSONValue? { try? JSONDecoder().decode(JSONValue.self, from: body) }
    }

    private let server: HTTPServer
    private let state: FakeOpenAIServerState

    /// Starts a server.
    /// - Parameters:
    ///   - port: the port, 0 for any free one.
    ///   - extraRequestHeaders: lowercased names of non-standard request headers to record.
    /// - Throws: `HTTPServerError` when the port cannot be bound.
    public init(port: Int = 0, extraRequestHeaders: [String] = []) throws {
        let state = FakeOpenAIServerState()
        var router = Router()
        router.post("/v1/chat/completions") { request in await state.answerChat(request) }
        router.post("/v1/audio/transcriptions") { request in await state.answerTranscription(request) }
        router.post("/v1/audio/speech") { request in await state.answerSpeech(request) }
        var configuration = HTTPServer.Configuration(port: port, maxRequestBodySize: 64 << 20)
        configuration.additionalRequestHeaders += extraRequestHeaders
        configuration.shutdownGracePeriod = 1
        server = HTTPServer(configuration: configuration, router: router)
        self.state = state
        try server.start()
    }

    /// The port the server listens on.
    public var port: Int { server.port }

    /// The API root to configure clients with: `http://127.0.0.1:<port>/v1`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/v1")! }

    /// Queues scripts for the next chat completion requests.
    public func enqueueChat(_ scripts: FakeChatScript...) { state.enqueue(chat: scripts) }
    /// Queues scripts for the next transcription requests.
    public func enqueueTranscription(_ scripts: FakeTranscriptionScript...) { state.enqueue(transcription: scripts) }
    /// Queues scripts for the next speech requests.
    public func enqueueSpeech(_ scripts: FakeSpeechScript...) { state.enqueue(speech: scripts) }

    /// Sets the scripts used once the queues are empty; `nil` answers 500.
    public func setFallback(chat: FakeChatScript? = nil, transcription: FakeTranscriptionScript? = nil, speech: FakeSpeechScript? = nil) {
        state.setFallback(chat: chat, transcription: transcription, speech: speech)
    }

    /// Sets what answers chat requests once the queue is empty: a function from the request body
    /// to a script, for upstreams that must answer what was asked (see `FakeConversationalChat`).
    /// `nil` removes it, leaving the fallback.
    public func setChatResponder(_ responder: (@Sendable (JSONValue) -> FakeChatScript)?) {
        state.setChatResponder(responder)
    }

    /// Sets what answers speech requests once the queue is empty: a function from the request body
    /// to a script, for upstreams whose audio follows the text asked for (as long as it would be
    /// spoken, say). `nil` removes it, leaving the fallback.
    public func setSpeechResponder(_ responder: (@Sendable (JSONValue) -> FakeSpeechScript)?) {
        state.setSpeechResponder(responder)
    }

    /// Every request received so far, oldest first.
    public var requests: [RecordedRequest] { state.recordedRequests }

    /// How many clients went away before their response was complete.
    public var disconnects: Int { state.disconnectCount }

    /// When the first body chunk of each streamed chat response was handed to the HTTP server,
    /// in order: the "first byte on the wire" for latency measurements.
    public var firstChunkInstants: [ContinuousClock.Instant] { state.firstChunkInstants }

    /// Waits until at least `count` requests have arrived.
    public func waitForRequests(_ count: Int) async { await state.waitUntil { $0.requests.count >= count } }

    /// Waits until at least `count` clients went away before their response was complete.
    public func waitForDisconnects(_ count: Int) async { await state.waitUntil { $0.disconnects >= count } }

    /// Stops the server.
    public func shutdown() async {
        await server.shutdown()
    }
}
