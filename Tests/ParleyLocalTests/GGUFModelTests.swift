import Foundation
import ParleyCore
import ParleyOpenAI
import Testing
@testable import ParleyLocal

/// A model of the user's own (`parley serve --llm-model PATH.gguf`): its header read for
/// defaults, and served by the embedded llama-server.
@Suite(.serialized) struct GGUFModelTests {
    @Test func theHeaderGivesNameArchitectureContextAndTemplate() async throws {
        let metadata = try GGUFMetadata(path: try await TinyModel.path())
        #expect(metadata.name == "parley-tiny-random")
        #expect(metadata.architecture == "llama")
        #expect(metadata.contextLength == 32_768)
        #expect(metadata.hasChatTemplate)
    }

    @Test func filesThatAreNotModelsAreRefusedByName() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gguf-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let text = folder.appendingPathComponent("notes.gguf")
        try Data("not a model at all".utf8).write(to: text)
        #expect(throws: GGUFMetadata.ReadError(description: "\(text.path) is not a GGUF model (no GGUF magic)")) {
            try GGUFMetadata(path: text.path)
        }
        let truncated = folder.appendingPathComponent("truncated.gguf")
        try (Data("GGUF".utf8) + Data([3, 0, 0, 0, 0])).write(to: truncated)
        #expect(throws: GGUFMetadata.ReadError(description: "the GGUF header ends early")) { try GGUFMetadata(path: truncated.path) }
        #expect(throws: GGUFMetadata.ReadError.self) { try GGUFMetadata(path: folder.appendingPathComponent("absent.gguf").path) }
    }

    @Test func aModelOfYourOwnIsServedWithDefaultsFromItsHeader() async throws {
        let configuration = try LocalLLMServer.Configuration.gguf(path: try await TinyModel.path(), locator: TestModels.locator)
        #expect(configuration.contextSize == 4_096 * configuration.parallelSlots)
        #expect(configuration.extraArguments.isEmpty, "the tiny model has its own chat template")
        let server = try LocalLLMServer(configuration: configuration)
        try await server.start()
        let model = OpenAILanguageModel(configuration: OpenAIConfiguration(baseURL: server.baseURL, model: "mine", retry: .none))
        var finished = false
        for try await event in model.stream(ChatRequest(messages: [.user("Hello")], maxTokens: 4)) {
            if case .finished = event { finished = true }
        }
        await server.stop()
        #expect(finished)
    }
}
