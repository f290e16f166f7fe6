import Foundation
import Testing

/// The realtime endpoint driven by the official `openai` Python SDK, GA and beta; every event
/// the server sends is validated against the SDK's pydantic models by the script, and a
/// default session gets no event outside them.
@Suite(.serialized) struct RealtimeConformanceTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Conformance/realtime_conformance.py").standardizedFileURL.path
    static let scenarios = [
        "manual_voice_turn", "server_vad_turn", "text_turn", "function_call", "cancel", "truncate", "conversation_order",
        "response_metadata", "truncate_then_cancel", "out_of_band", "tool_choice_required", "limits", "idle_timeout",
        "transcription_session", "g711_voice_turn",
    ]

    @Test(arguments: ["ga", "beta"])
    func officialSDKConversations(dialect: String) async throws {
        let server = try TestServer.start()
        let result = try await ChildProcess.run(
            ChildProcess.python,
            [Self.script, "--port", String(server.port), "--token", server.clientToken(), "--dialect", dialect] + Self.scenarios
        )
        await server.stop()
        #expect(result.status == 0, "\(result.output)")
        let passed = result.output.split(separator: "\n").filter { $0.hasPrefix("ok ") }.count
        #expect(passed == Self.scenarios.count, "\(result.output)")
    }
}
