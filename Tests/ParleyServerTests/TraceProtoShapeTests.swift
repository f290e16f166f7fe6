import Foundation
import ParleyCore
import ParleyServer
import Testing

/// The trace export read by OpenTelemetry's own schema: the body of a real export parses as
/// an `ExportTraceServiceRequest` with protobuf's strict JSON parser (PyPI
/// `opentelemetry-proto`), no unknown field, and its ids are hex of OTLP's lengths.
@Suite("Trace export: OTLP schema")
struct TraceProtoShapeTests {
    static let script = """
        import json, sys
        from google.protobuf.json_format import Parse
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
        body = open(sys.argv[1]).read()
        request = Parse(body, ExportTraceServiceRequest(), ignore_unknown_fields=False)
        raw = json.loads(body)
        names = []
        for resource, raw_resource in zip(request.resource_spans, raw["resourceSpans"]):
            assert resource.resource.attributes[0].key == "service.name"
            for scope, raw_scope in zip(resource.scope_spans, raw_resource["scopeSpans"]):
                for span, raw_span in zip(scope.spans, raw_scope["spans"]):
                    assert len(bytes.fromhex(raw_span["traceId"])) == 16 and len(bytes.fromhex(raw_span["spanId"])) == 8
                    assert 0 < span.start_time_unix_nano <= span.end_time_unix_nano
                    names.append(span.name)
        print("parsed", len(names), "spans:", ", ".join(sorted(set(names))))
        """

    @Test("an export parses as opentelemetry.proto's ExportTraceServiceRequest")
    func parsesWithTheSchema() async throws {
        let collector = try TraceCollector()
        defer { Task { await collector.stop() } }
        let server = try collector.startServer()
        defer { Task { await server.stop() } }
        let client = try await RealtimeTestClient.connect(server)
        _ = await client.next("session.created")
        try RecordingTests.send(RecordingTests.quiet(ms: 300) + RecordingTests.tone(ms: 800) + RecordingTests.quiet(ms: 600), to: client)
        #expect(await client.next("response.done") != nil)
        #expect(await ResourceProbe.eventually(within: 30) { await collector.spans.contains { $0["name"]?.stringValue == "parley.turn" } })

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("parley-otlp-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        let bodies = await collector.requests.map(\.body)
        let merged = JSONValue.object(["resourceSpans": .array(bodies.flatMap { $0["resourceSpans"]?.arrayElements ?? [] })])
        try Data(merged.jsonText.utf8).write(to: file)
        let result = try await ChildProcess.run(ChildProcess.python, ["-c", Self.script, file.path])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("parley.turn") && result.output.contains("parley.asr") && result.output.contains("chat "), "\(result.output)")
    }
}
