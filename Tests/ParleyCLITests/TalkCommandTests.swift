import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyCLI

/// `parley talk`: one voice turn from a WAV file, in process and against a running server.
@Suite("parley talk")
struct TalkCommandTests {
    private static let calculation = ToolCall(id: "call_1", name: "calculate", arguments: #"{"expression":"6*7"}"#)

    /// `seconds` of a quiet 300 Hz tone at `sampleRate` as a WAV file.
    static func writeTone(_ path: String, seconds: Double, sampleRate: Int = 16_000, channels: Int = 1) throws {
        let frames = Int(seconds * Double(sampleRate))
        let samples = (0..<frames * channels).map { Int16(4000 * sin(2 * Double.pi * 300 * Double($0 / channels) / Double(sampleRate))) }
        try WAVFile.pcm16Data(samples: samples, format: AudioFormat(sampleRate: sampleRate, channelCount: channels))
            .write(to: URL(fileURLWithPath: path))
    }

    @Test("in process: a voice session hears the audio, runs the tool, writes and speaks the reply")
    func inProcessTurn() async throws {
        let recognizer = ScriptedSpeechRecognizer(texts: ["what is six times seven"])
        let model = ScriptedLanguageModel(replies: [.toolCalls([Self.calculation]), .text("It is 42.")])
        let synthesizer = ScriptedSpeechSynthesizer(millisecondsPerWord: 100)
        let providers = VoiceSessionProviders(
            recognizer: recognizer, model: model, synthesizer: synthesizer, tools: ToolRegistry([CalculatorTool()]),
            // No filler: on a loaded machine even the calculator can outlast its delay.
            agentOptions: AgentOptions(fillerDelay: nil),
            makeVoiceActivityDetector: { EnergyVAD() }, makeResampler: AudioFiles.resampler(from:to:)
        )
        let input = (0..<24_000).map { Int16(3000 * sin(Double($0) / 10)) }
        var heard: [String] = []
        var text = ""
        var audio: [Int16] = []
        var tools: [TalkEvent] = []
        for try await event in InProcessTalk(providers: providers, configuration: VoiceSessionConfiguration(instructions: "Be brief.")).run(input, sampleRate: 24_000) {
            switch event {
            case .heard(let words): heard.append(words)
            case .replyText(let delta): text += delta
            case .replyAudio(let samples): audio += samples
            case .toolStarted, .toolFinished: tools.append(event)
            }
        }
        #expect(heard == ["what is six times seven"])
        #expect(text == "It is 42.")
        #expect(tools == [
            .toolStarted(name: "calculate", arguments: #"{"expression":"6*7"}"#),
            .toolFinished(name: "calculate", output: "42", isError: false),
        ])
        #expect(synthesizer.texts == ["It is 42."])
        #expect(audio.count == 3 * 100 * 24, "three words of 100 ms at 24 kHz")
        let utterances = recognizer.finalUtteranceSampleCounts
        #expect(utterances.count == 1)
        #expect(abs((utterances.first ?? 0) - 16_000) < 800, "about one second at the recognizer's 16 kHz (less the resampler's delay)")
        guard case .user(let parts)? = model.requests.first?.messages.last else {
            Issue.record("the model did not get the user's words")
            return
        }
        #expect(parts == [.text("what is six times seven")])
    }

    @Test("in process: nothing heard, and too little audio, end the turn with one clear error")
    func inProcessFailures() async throws {
        let providers = VoiceSessionProviders(
            recognizer: ScriptedSpeechRecognizer(texts: [""]), model: ScriptedLanguageModel(replies: []),
            synthesizer: ScriptedSpeechSynthesizer(), makeVoiceActivityDetector: { EnergyVAD() },
            makeResampler: AudioFiles.resampler(from:to:)
        )
        let talk = InProcessTalk(providers: providers, configuration: VoiceSessionConfiguration())
        await #expect(throws: CommandFailure("no speech was heard")) {
            for try await _ in talk.run(Array(repeating: 100, count: 24_000), sampleRate: 24_000) {}
        }
        await #expect(throws: CommandFailure("Nothing to commit: the input audio buffer holds less than 100 ms of audio.")) {
            for try await _ in talk.run(Array(repeating: 100, count: 1_200), sampleRate: 24_000) {}
        }
    }

    @Test("--url: the turn over the realtime protocol; transcript and reply printed, reply written as 24 kHz WAV")
    func remoteTurn() async throws {
        let model = ScriptedLanguageModel(replies: [.toolCalls([Self.calculation]), .text("It is 42.")])
        let server = try CLITestServer.start(languageModel: model, heard: ["what is six times seven"])
        let work = try TemporaryDirectory()
        defer { work.remove() }
        // No filler: on a loaded machine the tool can outlast its delay, and this test is about the turn.
        try Data(#"{"filler_delay_ms": 0}"#.utf8).write(to: work.url.appendingPathComponent("agent.json"))
        let created = await CommandRun.run(
            ["agents", "create", "agent.json", "--name", "Calc", "--tools", "calculate"], environment: server.environment, directory: work.url
        )
        let agentID = try #require(try JSONValue(parsing: created.output)["id"]?.stringValue)
        try Self.writeTone(work.path("question.wav"), seconds: 1.5, sampleRate: 44_100, channels: 2)

        let run = await CommandRun.run(
            ["talk", "question.wav", "--out", "reply.wav", "--url", server.url, "--agent", agentID],
            environment: ["PARLEY_SERVER_SECRET": CLITestServer.secret], directory: work.url
        )
        #expect(run.status == 0, "\(run.errorOutput)")
        #expect(run.output == "You: what is six times seven\nAgent: It is 42.\n")
        #expect(run.errorOutput == "→ calculate\n← calculate done\nWrote reply.wav (0.3 s of speech).\n")
        let reply = try WAVFile.read(Data(contentsOf: work.url.appendingPathComponent("reply.wav")))
        #expect(reply.format == AudioFormat(sampleRate: 24_000, channelCount: 1))
        #expect(reply.samples.count == 3 * 100 * 24)
        #expect(reply.samples.map(abs).max() ?? 0 > 0.05, "the reply is speech, not silence")
        await server.stop()
    }

    @Test("--url without --out: a text reply, no file")
    func remoteTextOnly() async throws {
        let server = try CLITestServer.start(heard: ["hello"])
        let work = try TemporaryDirectory()
        defer { work.remove() }
        try Self.writeTone(work.path("hello.wav"), seconds: 0.5)
        let run = await CommandRun.run(["talk", "hello.wav", "--url", server.url], environment: server.environment, directory: work.url)
        #expect(run.status == 0, "\(run.errorOutput)")
        #expect(run.output == "You: hello\nAgent: Hello from Parley.\n")
        #expect(run.errorOutput.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.url.path) == ["hello.wav"])
        await server.stop()
    }

    @Test("bad input files and refusals are one line, exit 1", arguments: [
        ("missing.wav", "error: cannot read missing.wav: no such file\n"),
        ("text.wav", "error: text.wav: not a WAV file: missing RIFF/WAVE header\n"),
        ("short.wav", "error: Nothing to commit: the input audio buffer holds less than 100 ms of audio.\n"),
        ("silence.wav", "error: no speech was heard\n"),
    ])
    func failures(file: String, message: String) async throws {
        let server = try CLITestServer.start(heard: [""])
        let work = try TemporaryDirectory()
        defer { work.remove() }
        try "RIFF? no.".write(toFile: work.path("text.wav"), atomically: true, encoding: .utf8)
        try Self.writeTone(work.path("short.wav"), seconds: 0.05)
        try Self.writeTone(work.path("silence.wav"), seconds: 0.5)
        let run = await CommandRun.run(["talk", file, "--url", server.url, "-o", "reply.wav"], environment: server.environment, directory: work.url)
        #expect(run.status == 1)
        #expect(run.output.isEmpty)
        #expect(run.errorOutput == message)
        #expect(!FileManager.default.fileExists(atPath: work.path("reply.wav")))
        await server.stop()
    }
}
