import Foundation
import ParleyCore
import ParleyNet
import ParleyServer
import ParleyTesting
import Testing

/// Per-turn traces exported over OTLP/HTTP JSON to a collector (a real HTTP server on port 0
/// that keeps what is POSTed): the spans of a spoken turn with a tool call, their ids, times,
/// parent/child links and `gen_ai.*` attributes; a collector that is down costs the session
/// nothing; the queue is bounded.
@Suite("Trace export")
struct TraceExportTests {
    @Test("a spoken turn with a tool call is one trace: turn, VAD, ASR, LLM, the tool, TTS")
    func spansOfATurn() async throws {
        let collector = try TraceCollector()
        defer { Task { await collector.stop() } }
        let server = try collector.startServer { tracing in
            tracing.serviceName = "parley-under-test"
            tracing.headers = ["x-api-key": "collector-key"]
        }
        defer { Task { await server.stop() } }
        let created = try await server.request("POST", "/v1/agents", json: #"{"name":"Clock","tools":[{"type":"builtin","name":"get_current_time"}]}"#)
        let agentID = try #require(created.body["id"]?.stringValue)
        let client = try await RealtimeTestClient.connect(server, query: "?agent=\(agentID)")
        _ = await client.next("session.created")
        // The model calls the tool first (tool_choice required), then answers.
        try client.send(#"{"type":"session.update","session":{"type":"realtime","tool_choice":"required"}}"#)
        _ = await client.next("session.updated")
        try RecordingTests.send(RecordingTests.quiet(ms: 300) + RecordingTests.tone(ms: 800) + RecordingTests.quiet(ms: 600), to: client)
        #expect(await client.next("response.done") != nil)

        let arrived = await ResourceProbe.eventually(within: 30) { await collector.spans.contains { $0["name"]?.stringValue == "parley.turn" } }
        try #require(arrived)
        let request = try #require(await collector.requests.first)
        #expect(request.headers["x-api-key"] == "collector-key")
        #expect(request.headers["content-type"]?.hasPrefix("application/json") == true)
        let resource = request.body["resourceSpans"]?.arrayElements?.first?["resource"]
        #expect(Self.attribute("service.name", of: resource)?["stringValue"]?.stringValue == "parley-under-test")

        let spans = await collector.spans
        let root = try #require(spans.first { $0["name"]?.stringValue == "parley.turn" })
        let traceID = try #require(root["traceId"]?.stringValue)
        let rootID = try #require(root["spanId"]?.stringValue)
        #expect(root["parentSpanId"] == nil)
        let turn = spans.filter { $0["traceId"]?.stringValue == traceID }
        let names = Set(turn.compactMap { $0["name"]?.stringValue })
        let chat = try #require(turn.first { $0["name"]?.stringValue?.hasPrefix("chat ") == true })
        #expect(names.isSuperset(of: ["parley.turn", "parley.vad", "parley.asr", "execute_tool get_current_time", "parley.tts"]), "\(names)")
        for span in turn {
            #expect(Self.isHex(span["traceId"]?.stringValue, length: 32))
            #expect(Self.isHex(span["spanId"]?.stringValue, length: 16))
            if span["spanId"]?.stringValue != rootID { #expect(span["parentSpanId"]?.stringValue == rootID) }
            let start = try #require(span["startTimeUnixNano"]?.stringValue.flatMap(UInt64.init))
            let end = try #require(span["endTimeUnixNano"]?.stringValue.flatMap(UInt64.init))
            #expect(start <= end && start > 1_700_000_000_000_000_000)
        }
        #expect(Set(turn.compactMap { $0["spanId"]?.stringValue }).count == turn.count)
        // The stages in order: the turn ends, is transcribed, answered.
        let vad = try #require(turn.first { $0["name"]?.stringValue == "parley.vad" })
        let asr = try #require(turn.first { $0["name"]?.stringValue == "parley.asr" })
        #expect(Self.nanos(vad, "endTimeUnixNano") <= Self.nanos(asr, "startTimeUnixNano"))
        #expect(Self.nanos(asr, "endTimeUnixNano") <= Self.nanos(chat, "startTimeUnixNano"))
        // OpenTelemetry's GenAI attribute names.
        #expect(Self.attribute("gen_ai.operation.name", of: chat)?["stringValue"]?.stringValue == "chat")
        #expect(Self.attribute("gen_ai.request.model", of: chat)?["stringValue"]?.stringValue?.isEmpty == false)
        #expect(Self.attribute("gen_ai.usage.output_tokens", of: chat)?["intValue"]?.stringValue == "5")
        #expect(Self.attribute("gen_ai.usage.input_tokens", of: chat)?["intValue"]?.stringValue == "10")
        let tool = try #require(turn.first { $0["name"]?.stringValue == "execute_tool get_current_time" })
        #expect(Self.attribute("gen_ai.tool.name", of: tool)?["stringValue"]?.stringValue == "get_current_time")
        #expect(Self.attribute("gen_ai.operation.name", of: tool)?["stringValue"]?.stringValue == "execute_tool")
        #expect(Self.attribute("parley.response.status", of: root)?["stringValue"]?.stringValue == "completed")
        // The session's own latency figures (TurnMetrics) ride on the root span.
        #expect((Self.attribute("parley.turn.first_audio_ms", of: root)?["doubleValue"]?.numberValue ?? -1) >= 0)
        #expect((Self.attribute("parley.turn.transcription_ms", of: root)?["doubleValue"]?.numberValue ?? -1) >= 0)
        #expect(server.app.context.traces?.droppedSpans == 0)
    }

    @Test("a collector that is down: the session answers as usual; the spans are dropped and counted")
    func collectorDown() async throws {
        let closed = try ClosedPort()
        let server = try TestServer.start { settings in
            var tracing = OTLPConfiguration(endpoint: URL(string: "http://127.0.0.1:\(closed.port)/v1/traces")!)
            tracing.scheduleDelay = .milliseconds(20)
            settings.tracing = tracing
        }
        defer { Task { await server.stop() } }
        let client = try await RealtimeTestClient.connect(server)
        _ = await client.next("session.created")
        for turn in 0..<3 {
            try client.send(#"{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"turn \#(turn)"}]}}"#)
            try client.send(#"{"type":"response.create"}"#)
            let done = await client.next("response.done")
            #expect(done?["response"]?["status"]?.stringValue == "completed")
        }
        let traces = try #require(server.app.context.traces)
        #expect(await ResourceProbe.eventually(within: 30) { traces.droppedSpans >= 3 && traces.failedRequests >= 1 })
        #expect(traces.exportedSpans == 0)
        let text = try await HTTPClient.shared.send(HTTPClient.Request(url: server.baseURL.appendingPathComponent("/metrics"))).body
        #expect(String(decoding: text, as: UTF8.self).contains("parley_trace_spans_dropped_total \(traces.droppedSpans)"))
    }

    @Test("the queue is bounded: spans beyond it are dropped and counted, never waited for")
    func boundedQueue() async {
        var configuration = OTLPConfiguration(endpoint: URL(string: "http://127.0.0.1:9/v1/traces")!)
        configuration.maxQueueSize = 3
        let exporter = OTLPTraceExporter(configuration: configuration)
        let span = TraceSpan(
            traceID: TraceSpan.makeTraceID(), spanID: TraceSpan.makeSpanID(), name: "s", kind: .internal,
            start: Date(), end: Date(), attributes: [:]
        )
        for _ in 0..<10 { exporter.submit(span) }
        #expect(exporter.droppedSpans == 7)
    }

    @Test("the OTEL_* environment", arguments: [
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"], "http://collector:4318/v1/traces", [String: String](), "parley", 0),
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/", "OTEL_SERVICE_NAME": "voice"], "http://collector:4318/v1/traces", [:], "voice", 0),
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:1", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://b/otlp/traces"], "https://b/otlp/traces", [:], "parley", 0),
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:1", "OTEL_EXPORTER_OTLP_HEADERS": "api-key=s%3Dcret, x-team = voice"], "http://a:1/v1/traces", ["api-key": "s=cret", "x-team": "voice"], "parley", 0),
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://a"], nil, [:], "parley", 1),
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"], "http://a:1/v1/traces", [:], "parley", 1),
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:1", "OTEL_SDK_DISABLED": "true"], nil, [:], "parley", 0),
        ([:], nil, [:], "parley", 0),
    ] as [([String: String], String?, [String: String], String, Int)])
    func environment(variables: [String: String], endpoint: String?, headers: [String: String], service: String, problemCount: Int) {
        var problems: [String] = []
        let configuration = OTLPConfiguration.load(environment: variables, problems: &problems)
        #expect(configuration?.endpoint.absoluteString == endpoint)
        #expect((configuration?.headers ?? [:]) == headers)
        #expect((configuration?.serviceName ?? "parley") == service)
        #expect(problems.count == problemCount, "\(problems)")
    }

    // MARK: - Helpers

    static func attribute(_ key: String, of object: JSONValue?) -> JSONValue? {
        object?["attributes"]?.arrayElements?.first { $0["key"]?.stringValue == key }?["value"]
    }

    static func isHex(_ text: String?, length: Int) -> Bool {
        guard let text else { return false }
        return text.count == length && text.allSatisfy { $0.isHexDigit && !$0.isUppercase } && text.contains { $0 != "0" }
    }

    static func nanos(_ span: JSONValue, _ key: String) -> UInt64 { span[key]?.stringValue.flatMap(UInt64.init) ?? 0 }
}

/// An OTLP/HTTP collector for tests: keeps every `POST /v1/traces` and answers 200.
final class TraceCollector: Sendable {
    struct Request: Sendable {
        var headers: [String: String]
        var body: JSONValue
    }

    private let server: HTTPServer
    private let store = Store()

    actor Store {
        var requests: [Request] = []
        func add(_ request: Request) { requests.append(request) }
    }

    init() throws {
        var router = Router()
        let store = store
        router.post("/v1/traces") { request in
            let body = (try? JSONDecoder().decode(JSONValue.self, from: request.body)) ?? .null
            var headers: [String: String] = [:]
            for (name, value) in request.headers { headers[name.lowercased()] = value }
            await store.add(Request(headers: headers, body: body))
            return .json(["partialSuccess": [String: String]()])
        }
        server = HTTPServer(configuration: HTTPServer.Configuration(port: 0, maxRequestBodySize: 16 << 20), router: router)
        try server.start()
    }

    var endpoint: URL { URL(string: "http://127.0.0.1:\(server.port)/v1/traces")! }

    /// A Parley server exporting its traces here every 50 ms, with `adjust`'s changes.
    func startServer(_ adjust: (inout OTLPConfiguration) -> Void = { _ in }) throws -> TestServer {
        var tracing = OTLPConfiguration(endpoint: endpoint)
        tracing.scheduleDelay = .milliseconds(50)
        adjust(&tracing)
        return try TestServer.start { $0.tracing = tracing }
    }
    var requests: [Request] { get async { await store.requests } }

    /// Every span received, in order.
    var spans: [JSONValue] {
        get async {
            await store.requests.flatMap { request in
                (request.body["resourceSpans"]?.arrayElements ?? []).flatMap { resource in
                    (resource["scopeSpans"]?.arrayElements ?? []).flatMap { $0["spans"]?.arrayElements ?? [] }
                }
            }
        }
    }

    func stop() async { await server.shutdown() }
}
