import Foundation
import ParleyCore
import ParleyOpenAI
import ParleyTesting
import Testing
@testable import ParleyLocal

@Suite struct LocalConversationModelTests {
    /// A server that is never started: only its slots are used.
    static func server(parallelSlots: Int) throws -> LocalLLMServer {
        try LocalLLMServer(configuration: .init(modelPath: "/dev/null", executablePath: "/bin/true", parallelSlots: parallelSlots))
    }

    @Test func eachConversationHoldsASlotUntilItsModelIsGone() throws {
        let server = try Self.server(parallelSlots: 2)
        let configuration = OpenAIConfiguration(baseURL: server.baseURL, model: "smollm2")
        var first: LocalConversationModel? = server.conversationModel(configuration: configuration)
        let second = server.conversationModel(configuration: configuration)
        let third = server.conversationModel(configuration: configuration)
        withExtendedLifetime((second, third)) {
            #expect(first?.slot == 0)
            #expect(second.slot == 1)
            #expect(third.slot == nil)
            first = nil
            #expect(server.conversationModel(configuration: configuration).slot == 0)
        }
    }

    @Test func requestsAskForTheConversationsSlotACachedPromptAndNoLoops() async throws {
        let fake = try FakeOpenAIServer()
        let server = try Self.server(parallelSlots: 1)
        // The request timeouts are the test's deadline.
        let configuration = OpenAIConfiguration(
            baseURL: fake.baseURL, model: "smollm2", timeouts: OpenAITimeouts(firstOutput: .seconds(10), idle: .seconds(10)), retry: .none
        )
        let pinned = server.conversationModel(configuration: configuration)
        let unpinned = server.conversationModel(configuration: configuration)
        fake.enqueueChat(.text(["a"]), .text(["b"]))
        do {
            for model in [pinned, unpinned] {
                for try await _ in model.stream(ChatRequest(messages: [.user("hi")])) {}
            }
        } catch {
            await fake.shutdown()
            throw error
        }
        await fake.shutdown()
        let bodies = fake.requests.compactMap(\.json)
        try #require(bodies.count == 2)
        #expect(bodies[0]["id_slot"] == 0)
        #expect(bodies[0]["cache_prompt"] == true)
        #expect(bodies[1]["id_slot"] == nil)
        #expect(bodies[1]["cache_prompt"] == true)
        #expect(bodies.allSatisfy { $0["dry_multiplier"] == 0.8 })
    }
}
