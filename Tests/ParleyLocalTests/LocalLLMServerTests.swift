import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ParleyCore
import ParleyOpenAI
import Testing
import ParleyTesting
@testable import ParleyLocal

@Suite struct LocalLLMServerTests {
    static func tinyServer() async throws -> LocalLLMServer {
        try await LocalLLMServer(configuration: .init(
            modelPath: TinyModel.path(),
            executablePath: TestModels.locator.llamaServerPath(),
            threadCount: 1, contextSize: 512, initialRestartDelay: .milliseconds(50)
        ))
    }

    @Test func startsAnswersChatCompletionsAndStopsWithoutOrphans() async throws {
        let server = try await Self.tinyServer()
        try await server.start()
        let pid = try #require(server.processID)
        #expect(server.baseURL.absoluteString == "http://127.0.0.1:\(server.port)/v1")
        #expect(try await HTTP.status(of: server.healthURL) == 200)

        let reply = try await HTTP.chat(server.baseURL, prompt: "hello", maxTokens: 8)
        #expect(reply.status == 200)
        #expect(reply.json?["choices"] != nil)

        await server.stop()
        #expect(server.processID == nil)
        #expect(kill(pid, 0) == -1 && errno == ESRCH)
    }

    @Test func restartsTheProcessWhenItDies() async throws {
        let server = try await Self.tinyServer()
        try await server.start()
        let first = try #require(server.signalProcess(SIGKILL))
        try await eventually { server.restartCount == 1 && server.processID != nil && server.processID != first }
        try await server.waitUntilHealthy(timeout: .seconds(30))
        let reply = try await HTTP.chat(server.baseURL, prompt: "are you back", maxTokens: 4)
        #expect(reply.status == 200)
        let second = try #require(server.processID)
        await server.stop()
        #expect(kill(second, 0) == -1 && errno == ESRCH)
        #expect(server.restartCount == 1)
    }

    @Test func openAILanguageModelStreamsFromTheServer() async throws {
        let server = try await Self.tinyServer()
        try await server.start()
        let model = OpenAILanguageModel(configuration: OpenAIConfiguration(baseURL: server.baseURL, model: "tiny", retry: .none))
        var text = ""
        var finish: FinishReason?
        for try await event in model.stream(ChatRequest(messages: [.user("hello")], temperature: 0, maxTokens: 12)) {
            switch event {
            case let .textDelta(delta): text += delta
            case let .finished(reason, _): finish = reason
            case .toolCall: break
            }
        }
        await server.stop()
        #expect(!text.isEmpty)
        #expect(finish == .length)
    }

    /// So many tokens that the tiny model is still writing its reply when the test reads the
    /// first one and kills the process, even on a loaded machine (a few thousand tokens were
    /// sometimes all written, and buffered, before the test saw the first).
    static let longReplyTokens = 32_000

    /// A reply in flight when the process dies ends with a typed error, and the next turn
    /// reaches the restarted process.
    @Test func aTurnInFlightWhenTheProcessDiesFailsWithATypedError() async throws {
        let server = try await LocalLLMServer(configuration: .init(
            modelPath: TinyModel.path(), executablePath: TestModels.locator.llamaServerPath(),
            threadCount: 1, contextSize: Self.longReplyTokens + 512, parallelSlots: 1, initialRestartDelay: .milliseconds(50)
        ))
        try await server.start()
        let model = OpenAILanguageModel(configuration: OpenAIConfiguration(baseURL: server.baseURL, model: "tiny", retry: .none))
        var deltas = 0
        var finished = false
        await #expect(throws: ProviderError.self) {
            for try await event in model.stream(ChatRequest(messages: [.user("talk for a long time")], temperature: 0, maxTokens: Self.longReplyTokens)) {
                if case .textDelta = event {
                    deltas += 1
                    if deltas == 1 { server.signalProcess(SIGKILL) }
                }
                if case .finished = event { finished = true }
            }
        }
        #expect(deltas >= 1 && !finished)
        try await eventually { server.restartCount == 1 }
        try await server.waitUntilHealthy(timeout: .seconds(30))
        var recovered = false
        for try await event in model.stream(ChatRequest(messages: [.user("again")], temperature: 0, maxTokens: 4)) {
            if case .finished = event { recovered = true }
        }
        await server.stop()
        #expect(recovered)
    }

    @Test func twoSessionsShareOneServer() async throws {
        let server = try await Self.tinyServer()
        try await server.start()
        async let first = HTTP.chat(server.baseURL, prompt: "first session", maxTokens: 16)
        async let second = HTTP.chat(server.baseURL, prompt: "second session", maxTokens: 16)
        let replies = try await [first, second]
        #expect(replies.allSatisfy { $0.status == 200 })
        await server.stop()
    }

    @Test func aModelThatFailsToLoadIsReportedWithTheServerOutput() async throws {
        let broken = FileManager.default.temporaryDirectory.appendingPathComponent("parley-broken-\(UUID()).gguf")
        try Data("this is not a gguf file".utf8).write(to: broken)
        defer { try? FileManager.default.removeItem(at: broken) }
        let server = try LocalLLMServer(configuration: .init(
            modelPath: broken.path, executablePath: TestModels.locator.llamaServerPath(), startupTimeout: .seconds(30)
        ))
        await #expect {
            try await server.start()
        } throws: { error in
            guard let error = error as? ProviderError else { return false }
            return error.provider == "llama-server" && error.message.contains("before it was ready")
        }
        #expect(server.processID == nil)
    }

    @Test func missingFilesNameThePathAndTheFix() {
        #expect {
            _ = try LocalLLMServer(configuration: .init(modelPath: "/nonexistent/model.gguf", executablePath: "/bin/true"))
        } throws: { error in
            "\(error)".contains("/nonexistent/model.gguf") && "\(error)".contains("scripts/setup")
        }
        let locator = ModelLocator(environment: ["HOME": "/nonexistent-home"])
        #expect {
            _ = try LocalLLMServer.Configuration.smolLM2(locator: locator)
        } throws: { error in
            "\(error)".contains("/nonexistent-home/.cache/parley/models/SmolLM2-135M-Instruct.Q8_0.gguf")
        }
    }

    /// The mechanism that keeps children from outliving Parley: the kernel kills a child when
    /// the thread that spawned it ends, as it does when Parley dies of SIGTERM, SIGINT or SIGKILL.
    @Test func aChildDiesWithTheThreadThatSpawnedIt() async throws {
        #expect(ChildProcess.deathSignalWrapper != nil, "setpriv (util-linux) is needed on Linux")
        let spawned = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<pid_t, any Error>) in
            Thread {
                continuation.resume(with: Result {
                    let pid = try ChildProcess.spawn(executable: "/bin/sleep", arguments: ["30"], logPath: "/dev/null")
                    // setpriv arms the signal, then execs: keep this thread alive until it has.
                    let deadline = Date().addingTimeInterval(10)
                    while Date() < deadline, !commandLine(of: pid).hasPrefix("/bin/sleep") { usleep(1_000) }
                    return pid
                })
            }.start()
        }
        let status = await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: ChildProcess.wait(for: spawned)) }.start()
        }
        #expect(status == .signalled(Int(SIGKILL)))
    }

    /// A child gets standard streams and nothing else: an inherited listening socket would keep
    /// accepting on a port after Parley closed it.
    @Test func aChildInheritsNoOtherDescriptors() async throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(listener > 2)
        defer { close(listener) }
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("parley-fds-\(UUID()).txt").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let pid = try ChildProcess.spawn(executable: "/bin/ls", arguments: ["/proc/self/fd"], logPath: log)
        let status = await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: ChildProcess.wait(for: pid)) }.start()
        }
        #expect(status == .exited(0))
        let descriptors = try String(contentsOfFile: log, encoding: .utf8).split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        // 0–2, and the one ls opens to read the directory.
        #expect(Set(descriptors).isSubset(of: [0, 1, 2, 3]), "inherited: \(descriptors)")
        #expect(!descriptors.contains(Int(listener)) || listener == 3)
    }

    @Test func smolLM2AnswersAQuestion() async throws {
        let server = try LocalLLMServer(configuration: .smolLM2())
        try await server.start()
        let reply = try await HTTP.chat(server.baseURL, prompt: "What is the capital of France? Answer in one word.", maxTokens: 16)
        await server.stop()
        #expect(reply.status == 200)
        let choices = reply.json?["choices"] as? [[String: Any]]
        let content = (choices?.first?["message"] as? [String: Any])?["content"] as? String ?? ""
        #expect(content.localizedCaseInsensitiveContains("paris"), "SmolLM2 said: \(content)")
    }
}

/// The command line of a running process, from /proc.
func commandLine(of pid: pid_t) -> String {
    let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data()
    return String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
}

/// Polls `condition` every 10 ms until it holds or `timeout` passes.
func eventually(timeout: Duration = .seconds(30), _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + TestDeadline.scaled(timeout)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition not met within \(timeout)")
            return
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// Plain URLSession requests for the tests (the OpenAI client lives in ParleyOpenAI).
enum HTTP {
    static let session = URLSession(configuration: .ephemeral)

    static func status(of url: URL) async throws -> Int {
        let (_, response) = try await session.data(from: url)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    static func chat(_ baseURL: URL, prompt: String, maxTokens: Int) async throws -> (status: Int, json: [String: Any]?) {
        var request = URLRequest(url: baseURL.appendingPathComponent("chat/completions"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: [
            "messages": [["role": "user", "content": prompt]],
            "max_tokens": maxTokens,
            "temperature": 0,
        ])
        let (data, response) = try await session.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, try? JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}
