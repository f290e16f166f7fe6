import Foundation
import ParleyCore
import ParleyServer
import ParleyTesting
import Testing

/// The server's language model gets a reply limit unless the agent or the client sets one: the
/// embedded SmolLM2 can fall into repeating itself, and a spoken reply has to end.
@Suite struct ReplyTokenLimitTests {
    @Test func theEmbeddedModelIsLimitedByDefaultAndARemoteOneIsNot() {
        #expect(ServerSettings.load(environment: [:]).0.replyTokenLimit == 150)
        let remote = ServerSettings.load(environment: ["PARLEY_LLM_URL": "http://127.0.0.1:9/v1", "PARLEY_LLM_MODEL": "m"]).0
        #expect(remote.replyTokenLimit == nil)
        #expect(ServerSettings.load(environment: ["PARLEY_MAX_OUTPUT_TOKENS": "40"]).0.replyTokenLimit == 40)
        let (settings, problems) = ServerSettings.load(environment: ["PARLEY_MAX_OUTPUT_TOKENS": "0"])
        #expect(problems == ["PARLEY_MAX_OUTPUT_TOKENS: \"0\" is not a whole number from 1 to 1000000"])
        #expect(settings.replyTokenLimit == 150)
    }

    @Test func aSessionStartsWithTheLimitAndTheClientCanLiftIt() async throws {
        let model = ScriptedLanguageModel(replies: [], fallback: .text("Hello."))
        var providers = TestServer.testProviders()
        providers.languageModel = model
        let server = try TestServer.start(providers: providers) { $0.maxOutputTokens = 40 }
        defer { Task { await server.stop() } }
        let client = try await RealtimeTestClient.connect(server)
        let created = await client.next("session.created")
        #expect(created?["session"]?["max_output_tokens"]?.numberValue == 40)

        try client.send(RealtimeHostileInputTests.sayHello)
        try client.send(#"{"type":"response.create"}"#)
        #expect(await client.next("response.done")?["response"]?["status"]?.stringValue == "completed")

        try client.send(#"{"type":"session.update","session":{"type":"realtime","max_output_tokens":"inf"}}"#)
        #expect(await client.next("session.updated")?["session"]?["max_output_tokens"]?.stringValue == "inf")
        try client.send(#"{"type":"response.create"}"#)
        #expect(await client.next("response.done")?["response"]?["status"]?.stringValue == "completed")

        // "inf" lifts the limit up to the server's ceiling (PARLEY_OUTPUT_TOKEN_CEILING), never past it.
        #expect(model.requests.map(\.maxTokens) == [40, ServerSettings().outputTokenCeiling])
    }
}
