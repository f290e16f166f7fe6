import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyCLI

/// The tool on the embedded offline stack, run as real processes: `parley serve` with whisper.cpp
/// and flite, `talk` and `chat` in process with SmolLM2 on the supervised llama-server.
@Suite("Offline stack, as processes", .serialized)
struct OfflineStackTests {
    @Test("serve: a generated secret that token and agents use; talk --url through whisper.cpp and flite; SIGTERM stops it")
    func serve() async throws {
        let fake = try FakeOpenAIServer()
        fake.setFallback(chat: .text(["It is ", "Paris."]))
        let work = try TemporaryDirectory()
        defer { work.remove() }
        let server = try await ServeProcess.start(
            ["--port", "0", "--data-dir", "data"],
            environment: ["PARLEY_LLM_URL": fake.baseURL.absoluteString, "PARLEY_LLM_MODEL": "fake"],
            directory: work.url
        )
        do {
            try await exercise(server, in: work)
        } catch {
            _ = await server.stop()
            await fake.shutdown()
            throw error
        }
        let (status, errorOutput) = await server.stop()
        #expect(status == 0)
        #expect(errorOutput.contains("Generated a server secret in "))
        #expect(errorOutput.contains("Shutting down…"))
        await fake.shutdown()
    }

    /// Mints a token and manages an agent with the secret the server generated, then talks to it.
    private func exercise(_ server: ServeProcess, in work: TemporaryDirectory) async throws {
        #expect(FileManager.default.fileExists(atPath: work.path("data/server-secret")))
        let token = try await ParleyProcess.run(["token", "--user", "gina", "--data-dir", "data"], directory: work.url)
        #expect(token.status == 0, "\(token.errorOutput)")
        let connection = ServerConnection(baseURL: URL(string: server.url)!, credential: token.output.trimmingCharacters(in: .newlines))
        let (link, _) = try await RealtimeLink.open(connection, agentID: nil)
        link.close()

        let created = try await ParleyProcess.run(
            ["agents", "create", "--name", "Offline", "--url", server.url], environment: ["PARLEY_DATA_DIR": "data"], directory: work.url
        )
        #expect(created.status == 0, "\(created.errorOutput)")
        let agentID = try #require(try JSONValue(parsing: created.output)["id"]?.stringValue)

        let said = try await ParleyProcess.run(["say", "What is the capital of France?", "-o", "question.wav"], directory: work.url)
        #expect(said.status == 0, "\(said.errorOutput)")
        let talked = try await ParleyProcess.run(
            ["talk", "question.wav", "--url", server.url, "--agent", agentID, "--out", "reply.wav"],
            environment: ["PARLEY_DATA_DIR": "data"], directory: work.url, timeout: .seconds(300)
        )
        #expect(talked.status == 0, "\(talked.errorOutput)")
        #expect(talked.output == "You: What is the capital of France?\nAgent: It is Paris.\n")
        let reply = try WAVFile.read(Data(contentsOf: work.url.appendingPathComponent("reply.wav")))
        #expect(reply.format == AudioFormat(sampleRate: 24_000))
        #expect(reply.samples.count > 12_000, "flite takes a while to say the reply")
    }

    @Test("talk and chat in process on whisper.cpp, SmolLM2 (llama-server) and flite")
    func embedded() async throws {
        let work = try TemporaryDirectory()
        defer { work.remove() }
        let said = try await ParleyProcess.run(["say", "What is the capital of France?", "-o", "question.wav"], directory: work.url)
        #expect(said.status == 0, "\(said.errorOutput)")

        let talked = try await ParleyProcess.run(["talk", "question.wav", "-o", "reply.wav"], directory: work.url, timeout: .seconds(300))
        #expect(talked.status == 0, "\(talked.errorOutput)")
        let lines = talked.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "You: What is the capital of France?")
        #expect(lines.count >= 2 && lines[1].hasPrefix("Agent: ") && lines[1].count > "Agent: ".count, "\(talked.output)")
        let reply = try WAVFile.read(Data(contentsOf: work.url.appendingPathComponent("reply.wav")))
        #expect(reply.format == AudioFormat(sampleRate: 24_000))
        #expect(reply.samples.count > 12_000)

        let chatted = try await ParleyProcess.run(
            ["chat"], input: Data("Say hello.\n/reset\nSay goodbye.\n".utf8), directory: work.url, timeout: .seconds(300)
        )
        #expect(chatted.status == 0, "\(chatted.errorOutput)")
        #expect(chatted.output.split(separator: "\n").count >= 2, "two replies: \(chatted.output)")
        #expect(chatted.errorOutput.contains("Started a new conversation."))
    }
}
