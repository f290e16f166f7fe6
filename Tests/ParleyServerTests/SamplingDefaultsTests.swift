import Foundation
import ParleyCore
import ParleyOpenAI
import ParleyServer
import ParleyTesting
import Testing

/// Replies of the embedded model are sampled for short spoken answers (temperature, repetition
/// penalty, length cap), each overridable per agent; a remote model gets the provider's own.
/// Checked in the request bodies a real HTTP upstream receives.
@Suite struct SamplingDefaultsTests {
    /// Starts a server whose default language model is `upstream`, asks one text turn and
    /// returns the body of the chat request the upstream received.
    private func requestBody(
        upstream: FakeOpenAIServer, agent: String? = nil, configure: @escaping (inout ServerSettings) -> Void = { _ in }
    ) async throws -> JSONValue {
        upstream.setFallback(chat: .text(["Hello there."]))
        var providers = TestServer.testProviders()
        providers.languageModel = OpenAILanguageModel(configuration: OpenAIConfiguration(baseURL: upstream.baseURL, model: "server-model"))
        let server = try TestServer.start(providers: providers, configure: configure)
        defer { Task { await server.stop() } }
        let client: RealtimeTestClient
        if let agent {
            let created = try await server.request("POST", "/v1/agents", json: agent)
            let agentID = try #require(created.body["id"]?.stringValue, "\(created.body.jsonText)")
            let instance = try await server.request("POST", "/v1/agents/\(agentID)/instances", json: #"{"user":"ada"}"#)
            let instanceID = try #require(instance.body["id"]?.stringValue)
            let token = try #require(instance.body["client_secret"]?["value"]?.stringValue)
            client = try await RealtimeTestClient.connect(server, token: token, query: "?instance=\(instanceID)")
        } else {
            client = try await RealtimeTestClient.connect(server)
        }
        _ = await client.next("session.created")
        try client.send(RealtimeHostileInputTests.sayHello)
        try client.send(#"{"type":"response.create","response":{"output_modalities":["text"]}}"#)
        #expect(await client.next("response.done")?["response"]?["status"]?.stringValue == "completed")
        return try #require(upstream.requests.last?.json)
    }

    @Test func theEmbeddedModelGetsSpokenAnswerDefaults() async throws {
        let upstream = try FakeOpenAIServer()
        let body = try await requestBody(upstream: upstream)
        await upstream.shutdown()
        #expect(body["temperature"]?.numberValue == 0.2)
        #expect(body["repeat_penalty"] == nil, "loops are the DRY sampler's: \(body.jsonText)")
        #expect(body["max_tokens"]?.numberValue == 150)
    }

    @Test func anAgentOverridesEachSetting() async throws {
        let upstream = try FakeOpenAIServer()
        let agent = #"{"name":"Precise","llm":{"base_url":"\#(upstream.baseURL.absoluteString)","model":"agent-model","temperature":0.9,"repetition_penalty":1.3,"max_output_tokens":60}}"#
        let body = try await requestBody(upstream: upstream, agent: agent)
        await upstream.shutdown()
        #expect(body["model"]?.stringValue == "agent-model")
        #expect(body["temperature"]?.numberValue == 0.9)
        #expect(body["repeat_penalty"]?.numberValue == 1.3)
        #expect(body["max_tokens"]?.numberValue == 60)
    }

    @Test func aRemoteModelGetsTheProvidersOwnSampling() async throws {
        let upstream = try FakeOpenAIServer()
        let body = try await requestBody(upstream: upstream) {
            $0.languageModel = .remote(baseURL: upstream.baseURL, apiKey: nil, model: "server-model")
        }
        await upstream.shutdown()
        #expect(body["temperature"] == nil && body["repeat_penalty"] == nil, "\(body.jsonText)")
        // The only limit is the server's ceiling on any response.
        #expect(body["max_tokens"] == .number(Double(ServerSettings().outputTokenCeiling)), "\(body.jsonText)")
    }

    @Test func outOfRangeSamplingIsRefused() async throws {
        let server = try TestServer.start()
        defer { Task { await server.stop() } }
        let refused = try await server.request("POST", "/v1/agents", json: #"{"name":"Loop","llm":{"repetition_penalty":3,"max_output_tokens":0}}"#)
        #expect(refused.status == 400)
        #expect(refused.body.jsonText.contains("llm.repetition_penalty: must be between 0.5 and 2"), "\(refused.body.jsonText)")
        #expect(refused.body.jsonText.contains("llm.max_output_tokens: must be at least 1"), "\(refused.body.jsonText)")
    }
}
