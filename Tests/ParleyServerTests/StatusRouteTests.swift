import Foundation
import ParleyServer
import Testing

/// `GET /v1/status` names the engines, never where they run, and says when the server is still starting.
@Suite struct StatusRouteTests {
    @Test func namesTheEnginesButNotTheirEndpoints() async throws {
        var providers = TestServer.testProviders()
        providers.components = [
            ProviderComponent(role: "speech-to-text", name: "whisper-1", detail: "at https://secret.example/v1"),
            ProviderComponent(role: "language model", name: "SmolLM2-135M-Instruct", detail: "on llama-server"),
        ]
        providers.notice = "SmolLM2-135M is a tiny demo model."
        let server = try TestServer.start(providers: providers)
        let (status, body, _) = try await server.request("GET", "/v1/status", token: .some(nil))
        await server.stop()
        #expect(status == 200)
        #expect(body["status"]?.stringValue == "ok")
        #expect(body["notice"]?.stringValue == "SmolLM2-135M is a tiny demo model.")
        #expect(body.jsonText.contains("whisper-1") && body.jsonText.contains("SmolLM2-135M-Instruct"))
        #expect(!body.jsonText.contains("secret.example") && !body.jsonText.contains("llama-server"), "\(body.jsonText)")
    }

    @Test func aServerStillLoadingSaysSo() async throws {
        let server = try TestServer.start(startsReady: false)
        let (status, body, _) = try await server.request("GET", "/v1/status", token: .some(nil))
        await server.stop()
        #expect(status == 503)
        #expect(body["status"]?.stringValue == "starting")
    }
}
