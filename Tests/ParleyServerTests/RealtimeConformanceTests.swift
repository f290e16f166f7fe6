import Foundation
import ParleyTesting
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

    /// `parley serve --tls-cert --tls-key`: the SDK over `wss://`, trusting only the server's
    /// self-signed certificate; a plain `ws://` connection to the same port gets no session.
    @Test func officialSDKOverWSSWithASelfSignedCertificate() async throws {
        let certificate = try await SelfSignedCertificate.make()
        defer { certificate.remove() }
        let server = try TestServer.start { $0.tls = certificate.tls }
        let secure = try await ChildProcess.run(
            ChildProcess.python,
            [Self.script, "--port", String(server.port), "--token", server.clientToken(), "--dialect", "ga",
             "--ca-file", certificate.certificatePath, "text_turn", "function_call", "manual_voice_turn"]
        )
        let plain = try await ChildProcess.run(
            ChildProcess.python,
            [Self.script, "--port", String(server.port), "--token", server.clientToken(), "--dialect", "ga", "text_turn"]
        )
        await server.stop()
        #expect(secure.status == 0, "\(secure.output)")
        #expect(secure.output.split(separator: "\n").filter { $0.hasPrefix("ok ") }.count == 3, "\(secure.output)")
        #expect(plain.status != 0 && !plain.output.contains("ok ga"), "\(plain.output)")
    }
}
