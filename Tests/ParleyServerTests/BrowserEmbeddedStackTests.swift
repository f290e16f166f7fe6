import Foundation
import ParleyCore
import ParleyLocal
import Testing

/// The web client in headless Chromium against the real thing: the built `parley serve` as a
/// child process on a free loopback port, with nothing configured, so it runs the embedded
/// offline stack (whisper.cpp tiny.en, SmolLM2 on llama-server, flite, Silero VAD) and mints the
/// page's token with a secret it generated. The fake microphone plays a question flite spoke;
/// the user's bubble must hold the words whisper.cpp heard, the agent's bubble SmolLM2's answer,
/// and the page must play flite's speech. Restarting stops the process with SIGTERM and starts
/// a new one on the same port and data directory.
///
/// It belongs to the serialized suite of the in-process browser tests, so the two Chromium runs
/// never overlap on a small machine.
extension BrowserTests {
    /// What the fake microphone says.
    static let spokenQuestion = "What is the capital of France?"

    /// The browser tests that matter against the real stack; the rest (a quick tap, the press
    /// that interrupts, the light and dark screenshots) test the page alone and run in process.
    static let embeddedStackTests = [
        "test_hold_to_talk_turn_with_pointer_then_space_bar",
        "test_typed_turn_is_answered_in_speech",
        "test_hands_free_turn",
        "test_talking_over_the_agent_interrupts_it",
        "test_microphone_denied_explains_and_typing_still_works",
        "test_reconnects_after_the_server_restarts",
        "test_page_names_the_engines",
    ].map { "test_web_client.WebClientTests.\($0)" }

    @Test("against parley serve on the embedded stack: spoken, typed and hands-free turns, talking over the agent, denied microphone, restart")
    func webClientAgainstTheEmbeddedStack() async throws {
        let tools = try BrowserTestTools.locate()
        let scratch = try ScratchDirectory()
        let question = scratch.url.appendingPathComponent("question.wav")
        try await FliteSpeech.wav(Self.spokenQuestion).write(to: question)
        let launcher = EmbeddedServeLauncher(
            dataDirectory: scratch.url.appendingPathComponent("data"), webRoot: tools.packageRoot.appendingPathComponent("Web")
        )
        var server: ServerProcess? = try await launcher.start(port: 0)
        let port = server?.port ?? 0
        var serverLog = ""
        let run: BrowserTestRun
        do {
            run = try await BrowserTestRun.run(
                Self.embeddedStackTests, tools: tools,
                environment: [
                    "PARLEY_URL": "http://127.0.0.1:\(port)",
                    "PARLEY_SPEECH_WAV": question.path,
                    "PARLEY_SPEECH_TEXT": Self.spokenQuestion,
                    "PARLEY_ARTIFACTS_DIR": tools.packageRoot.appendingPathComponent(".cache/browser").path,
                    "PARLEY_SCREENSHOT_PREFIX": "embedded-",
                    // The embedded stack has the Smart Turn model: hands-free judges pauses.
                    "PARLEY_HANDS_FREE_TURN_DETECTION": "semantic_vad",
                    "PARLEY_EXPECT_ENGINES": "whisper.cpp tiny.en,SmolLM2-135M-Instruct,Piper en_US-joe-medium",
                ],
                within: .seconds(600),
                stopServer: {
                    serverLog += server?.standardError ?? ""
                    #expect(await server?.terminate() == 0, "parley serve stops cleanly on SIGTERM")
                    server = nil
                },
                startServer: { server = try await launcher.start(port: port) }
            )
        } catch {
            _ = await server?.terminate()
            throw error
        }
        serverLog += server?.standardError ?? ""
        #expect(await server?.terminate() == 0, "parley serve stops cleanly on SIGTERM")
        run.expectPassed(testCount: Self.embeddedStackTests.count, context: "parley serve's log:\n\(serverLog.suffix(4_000))")
    }
}

/// Starts `parley serve` on the embedded stack: no provider settings (only where setup put the
/// models, when the environment says), a data directory of its own, the repository's web client.
private struct EmbeddedServeLauncher {
    let dataDirectory: URL
    let webRoot: URL

    func start(port: Int) async throws -> ServerProcess {
        let environment = ProcessInfo.processInfo.environment.filter { ["PARLEY_MODEL_DIR", "PARLEY_LLAMA_SERVER", "PARLEY_ONNXRUNTIME_LIBRARY"].contains($0.key) }
        let server = try ServerProcess(
            arguments: ["--host", "127.0.0.1", "--port", String(port), "--data-dir", dataDirectory.path, "--web-root", webRoot.path],
            environment: environment, dataDirectory: dataDirectory
        )
        do {
            try await server.waitUntilReady(seconds: 120)
        } catch {
            _ = await server.terminate()
            throw error
        }
        return server
    }
}

/// Speech synthesised by flite in process.
private enum FliteSpeech {
    /// A 16 kHz pcm16 WAV of `text` spoken by flite's default voice.
    static func wav(_ text: String) async throws -> Data {
        let synthesizer = try FliteSpeechSynthesizer()
        var samples: [Int16] = []
        for try await chunk in synthesizer.synthesize(text, options: SpeechOptions()) { samples += chunk }
        return WAVFile.pcm16Data(samples: samples, format: AudioFormat(sampleRate: synthesizer.sampleRate))
    }
}
