import Foundation
import ParleyCore
import ParleyNet
import ParleyTesting
import Testing

/// `parley serve` as a process: a server-side tool call over the realtime WebSocket (the
/// release build crashed on it, see `ToolProgress.reporter`), and a crash that the next start
/// reports with the events before it. `scripts/test` runs this suite against the release build.
@Suite("parley serve: tool calls and crash reports")
struct ServeToolCallAndCrashTests {
    /// Starts `parley serve` on `directory` with its language model at `upstream`, the rest scripted.
    static func serve(_ directory: URL, upstream: FakeOpenAIServer) async throws -> ServerProcess {
        let url = upstream.baseURL.absoluteString
        let server = try ServerProcess(
            arguments: ["--host", "127.0.0.1", "--port", "0", "--data-dir", directory.path],
            environment: [
                "PARLEY_SERVER_SECRET": ServerProcess.secret, "PARLEY_VAD": "energy",
                "PARLEY_LLM_URL": url, "PARLEY_LLM_MODEL": "fake-chat", "PARLEY_ASR_URL": url, "PARLEY_TTS_URL": url,
            ],
            dataDirectory: directory
        )
        try await server.waitUntilReady()
        return server
    }

    /// A fake OpenAI-compatible upstream that answers what it is asked and speaks a short sound.
    static func conversationalUpstream() throws -> FakeOpenAIServer {
        let upstream = try FakeOpenAIServer()
        upstream.setChatResponder(FakeConversationalChat.reply(to:))
        upstream.setFallback(speech: .samples(Array(repeating: 500, count: 2_400)))
        return upstream
    }

    @Test("a typed question whose answer needs get_current_time is answered, and the server lives on")
    func toolCallOverTheRealtimeSocket() async throws {
        let upstream = try Self.conversationalUpstream()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-tool-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await Self.serve(directory, upstream: upstream)
        let agent = try await ReliabilityCrashRecoveryTests.rest(
            server, "POST", "/v1/agents", #"{"name":"Clock","tools":[{"type":"builtin","name":"get_current_time"}]}"#
        )
        let agentID = try #require(agent["id"]?.stringValue)

        for attempt in 1...2 {
            let client = try await ProcessRealtimeClient.connect(port: server.port, query: "?agent=\(agentID)")
            #expect(await client.next("session.created") != nil)
            let (status, _) = try await client.turn("What time is it?")
            #expect(status == "completed", "attempt \(attempt): \(server.standardError.suffix(3_000))")
            let events = await client.events
            // The server ran the tool and sent its result back to the model.
            let toolResults = upstream.requests.compactMap(\.json).compactMap { $0["messages"]?.arrayElements?.last }
                .filter { $0["role"]?.stringValue == "tool" }
            #expect(toolResults.count == attempt, "attempt \(attempt)")
            let answer = events.last { $0["type"]?.stringValue == "response.output_audio_transcript.done" }?["transcript"]?.stringValue
            #expect(answer?.hasPrefix("The tool said: ") == true, "attempt \(attempt): \(answer ?? "no transcript")")
            client.close()
        }
        #expect(server.process.isRunning)
        #expect(await server.terminate() == 0)
        await upstream.shutdown()
    }

    @Test("a crashed server leaves its backtrace in the log, and the next start reports the crash with the events before it")
    func crashIsReportedAtTheNextStart() async throws {
        let upstream = try Self.conversationalUpstream()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-crash-report-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }

        let crashed = try await Self.serve(directory, upstream: upstream)
        let client = try await ProcessRealtimeClient.connect(port: crashed.port)
        #expect(await client.next("session.created") != nil)
        _ = try await client.turn("Hello")
        // A segmentation fault, as a bad pointer dereference raises. The Swift runtime prints the
        // backtrace and returns; a real fault faults again and ends the process, a signal sent
        // from outside does not, so a second one (met by the default action) ends it.
        kill(crashed.pid, SIGSEGV)
        let backtraced = await ResourceProbe.eventually(within: 30) { crashed.standardError.contains("Backtrace took") }
        #expect(backtraced, "no backtrace in the log: \(crashed.standardError.suffix(2_000))")
        kill(crashed.pid, SIGSEGV)
        let status = await crashed.exitStatus()
        client.close()
        #expect(status != 0)
        let crashLog = crashed.standardError
        #expect(crashLog.contains("Program crashed"), "no backtrace in the log: \(crashLog.suffix(2_000))")
        #expect(crashLog.contains("Thread 0"), "no thread in the backtrace: \(crashLog.suffix(2_000))")

        let restarted = try await Self.serve(directory, upstream: upstream)
        let startLog = restarted.standardError
        #expect(startLog.contains("parley serve: restarted after a crash: the previous run (pid \(crashed.pid)"), "\(startLog.prefix(3_000))")
        #expect(startLog.contains(#""event":"session.started""#), "the last events are not reported: \(startLog.prefix(3_000))")
        #expect(startLog.contains(#""event":"restarted_after_crash""#))
        #expect(await restarted.terminate() == 0)

        // A clean shutdown is not reported as a crash.
        let third = try await Self.serve(directory, upstream: upstream)
        #expect(!third.standardError.contains("restarted after a crash"))
        #expect(await third.terminate() == 0)
        await upstream.shutdown()
    }
}
