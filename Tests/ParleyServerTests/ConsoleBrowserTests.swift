import Foundation
import ParleyCore
import ParleyServer
import ParleyTesting
import Testing

/// The operator console in headless Chromium against a real Parley server: runs
/// `Tests/Browser/test_console.py`. A call made from the web client (its fake microphone plays
/// a 500 Hz tone, which `PitchRecognizer` hears as "500") appears live in the console and, once
/// ended, with its transcript, waterfall and recording; the player seeks by turn; an agent edited
/// in the console answers differently; a stored handoff and filler are marked in the transcript,
/// whose call is found by what was said; a client token opens neither the console nor its API. The
/// run's screenshots of each view go to the artifacts, or with `PARLEY_UPDATE_SCREENSHOTS=1` to
/// the README's `docs/images/console-*.png` (so a test run leaves the checkout as it was).
@Suite(.serialized, .enabled(if: BrowserTestTools.available))
struct ConsoleBrowserTests {
    @Test("live call, transcript, waterfall, recording, seeking, agent editing, handoff and filler, search by words, client token refused")
    func consoleInHeadlessChromium() async throws {
        let tools = try BrowserTestTools.locate()
        let scratch = try ScratchDirectory()
        let microphoneSound = scratch.url.appendingPathComponent("tone-syllables.wav")
        try ToneSyllables.wav(hertz: PitchRecognizer.toneHertz, seconds: 1.8).write(to: microphoneSound)
        var providers = BrowserTests.providers()
        providers.languageModel = InstructionsLanguageModel()
        let server = try TestServer.start(providers: providers)
        _ = try await ConsoleAPITests.seedHandoff(server)
        let artifacts = tools.packageRoot.appendingPathComponent(".cache/browser-tests")
        let updatesREADME = ProcessInfo.processInfo.environment["PARLEY_UPDATE_SCREENSHOTS"] == "1"
        let screenshots = updatesREADME ? tools.packageRoot.appendingPathComponent("docs/images") : artifacts
        let run = try await BrowserTestRun.run(
            ["test_console"], tools: tools,
            environment: [
                "PARLEY_URL": "http://127.0.0.1:\(server.port)",
                "PARLEY_SPEECH_WAV": microphoneSound.path,
                "PARLEY_SPEECH_TEXT": String(PitchRecognizer.toneHertz),
                "PARLEY_ARTIFACTS_DIR": artifacts.path,
                "PARLEY_SCREENSHOTS_DIR": screenshots.path,
                "PARLEY_CONSOLE_TOKEN": ConsoleToken.mint(secret: server.secret).token,
                "PARLEY_CLIENT_TOKEN": server.clientToken(user: "mallory"),
            ],
            within: .seconds(900),
            stopServer: {}, startServer: {}
        )
        await server.stop()
        run.expectPassed(testCount: 4)
    }
}

/// A language model that says what its agent's instructions tell it to ("Say: Good morning."
/// answers "Good morning."), so an agent edited in the console is heard answering differently.
struct InstructionsLanguageModel: LanguageModel {
    func stream(_ request: ChatRequest) -> AsyncThrowingStream<LanguageModelEvent, any Error> {
        let instructions = request.messages.compactMap { if case .system(let text) = $0 { text } else { nil } }.joined(separator: "\n")
        let reply = instructions.range(of: "Say: ").map { instructions[$0.upperBound...].prefix { $0 != "\n" } }.map(String.init) ?? "Hello from Parley."
        return AsyncThrowingStream { continuation in
            for word in reply.split(separator: " ") { continuation.yield(.textDelta(word + " ")) }
            continuation.yield(.finished(.stop, nil))
            continuation.finish()
        }
    }
}
