import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyCLI

/// `say`, `transcribe`, `talk` and `chat` in process on OpenAI-compatible providers
/// (`PARLEY_*_URL`), served by a real fake server: the commands honour the server's settings.
@Suite("In-process commands on OpenAI-compatible providers")
struct ProviderCommandTests {
    /// The environment pointing every provider at `fake`.
    static func environment(_ fake: FakeOpenAIServer) -> [String: String] {
        let url = fake.baseURL.absoluteString
        return [
            "PARLEY_ASR_URL": url, "PARLEY_TTS_URL": url, "PARLEY_LLM_URL": url,
            "PARLEY_LLM_MODEL": "fake-chat", "PARLEY_TTS_VOICE": "nova", "PARLEY_SYSTEM_PROMPT": "Be brief.",
        ]
    }

    @Test("say: text from arguments or standard input to a WAV file at the synthesizer's rate")
    func say() async throws {
        let fake = try FakeOpenAIServer()
        let work = try TemporaryDirectory()
        defer { work.remove() }
        let speech = (0..<4_800).map { Int16(truncatingIfNeeded: $0 * 7) }
        fake.enqueueSpeech(.samples(speech), .samples(speech))

        let run = await CommandRun.run(
            ["say", "Hello", "there.", "-o", "hello.wav", "--speed", "1.5"], environment: Self.environment(fake), directory: work.url
        )
        #expect(run.status == 0, "\(run.errorOutput)")
        #expect(run.output.isEmpty)
        #expect(run.errorOutput == "Wrote hello.wav (0.2 s of speech).\n")
        let wav = try WAVFile.read(Data(contentsOf: work.url.appendingPathComponent("hello.wav")))
        #expect(wav.format == AudioFormat(sampleRate: 24_000))
        #expect(PCM16Buffer(wav.buffer).samples == speech)
        let request = try #require(fake.requests.first?.json)
        #expect(request["input"] == "Hello there.")
        #expect(request["voice"] == "nova")
        #expect(request["speed"] == 1.5)

        let piped = await CommandRun.run(
            ["say", "--output", "piped.wav", "--voice", "echo"], environment: Self.environment(fake), input: "  From a pipe.\n", directory: work.url
        )
        #expect(piped.status == 0, "\(piped.errorOutput)")
        #expect(fake.requests.last?.json?["input"] == "From a pipe.")
        #expect(fake.requests.last?.json?["voice"] == "echo")
        await fake.shutdown()
    }

    @Test("say: no text is a usage error on a terminal and a failure from a pipe; a provider error is one line")
    func sayFailures() async throws {
        let fake = try FakeOpenAIServer()
        let work = try TemporaryDirectory()
        defer { work.remove() }
        let terminal = await CommandRun.run(["say", "-o", "x.wav"], environment: Self.environment(fake) + ["NO_COLOR": "1"], terminal: true)
        #expect(terminal.status == 64)
        #expect(terminal.errorOutput == "error: missing text: give it as arguments or on standard input\nUsage: parley say [<text>...] --output <file> [--voice <name>] [--speed <rate>]\n")
        let empty = await CommandRun.run(["say", "-o", "x.wav"], environment: Self.environment(fake), input: " \n")
        #expect(empty.status == 1)
        #expect(empty.errorOutput == "error: nothing to say: the text is empty\n")

        fake.enqueueSpeech(.error(status: 401, message: "Incorrect API key provided."))
        let refused = await CommandRun.run(["say", "Hi", "-o", "x.wav"], environment: Self.environment(fake), directory: work.url)
        #expect(refused.status == 1)
        #expect(refused.errorOutput.hasPrefix("error: openai-speech: "))
        #expect(refused.errorOutput.filter { $0 == "\n" }.count == 1)
        #expect(!FileManager.default.fileExists(atPath: work.path("x.wav")))

        fake.enqueueSpeech(.samples([1, 2, 3]))
        let unwritable = await CommandRun.run(["say", "Hi", "-o", "no/such/dir/x.wav"], environment: Self.environment(fake), directory: work.url)
        #expect(unwritable.status == 1)
        #expect(unwritable.errorOutput == "error: cannot write no/such/dir/x.wav: no such file\n")
        await fake.shutdown()
    }

    @Test("transcribe: one file prints its text; several print names; --json has timings; a bad file is reported and the rest go on")
    func transcribe() async throws {
        let fake = try FakeOpenAIServer()
        let work = try TemporaryDirectory()
        defer { work.remove() }
        try TalkCommandTests.writeTone(work.path("one.wav"), seconds: 1, sampleRate: 48_000, channels: 2)
        try TalkCommandTests.writeTone(work.path("two.wav"), seconds: 0.5, sampleRate: 8_000)
        fake.enqueueTranscription(.text("First file."), .text("First file."), .text("Second file."), .text("First file."), .text("Second file."))

        let single = await CommandRun.run(["transcribe", "one.wav"], environment: Self.environment(fake), directory: work.url)
        #expect(single.status == 0, "\(single.errorOutput)")
        #expect(single.output == "First file.\n")
        #expect(single.errorOutput.isEmpty)

        let several = await CommandRun.run(["transcribe", "one.wav", "two.wav"], environment: Self.environment(fake), directory: work.url)
        #expect(several.output == "one.wav: First file.\ntwo.wav: Second file.\n")

        let json = await CommandRun.run(["transcribe", "one.wav", "missing.wav", "two.wav", "--json"], environment: Self.environment(fake), directory: work.url)
        #expect(json.status == 1)
        #expect(json.errorOutput == "error: cannot read missing.wav: no such file\n")
        let lines = json.output.split(separator: "\n").map { try? JSONValue(parsing: String($0)) }
        #expect(lines.count == 2)
        #expect(lines.first??["file"] == "one.wav")
        #expect(lines.first??["text"] == "First file.")
        #expect(lines.first??["audio_seconds"] == 1)
        #expect(lines.last??["audio_seconds"] == 0.5)
        #expect((lines.last??["processing_seconds"]?.numberValue ?? -1) >= 0)
        #expect(lines.last??["real_time_factor"]?.numberValue != nil)

        let upload = try #require(fake.requests.first)
        #expect(upload.path == "/v1/audio/transcriptions")
        let wavStart = try #require(upload.body.range(of: Data("RIFF".utf8)))
        let sent = try WAVFile.read(upload.body[wavStart.lowerBound...])
        #expect(sent.format == AudioFormat(sampleRate: 16_000), "resampled to the recognizer's rate, mixed to mono")
        await fake.shutdown()
    }

    @Test("chat in process: the model PARLEY_LLM_URL names, with the system prompt and built-in tools")
    func chat() async throws {
        let fake = try FakeOpenAIServer()
        fake.enqueueChat(
            .toolCalls([ToolCall(id: "call_1", name: "calculate", arguments: #"{"expression":"6*7"}"#)]),
            .text(["It is ", "42."]),
            .text(["You asked ", "about 6 times 7."])
        )
        let run = await CommandRun.run(["chat"], environment: Self.environment(fake), input: "What is 6 times 7?\nWhat did I ask?\n")
        #expect(run.status == 0, "\(run.errorOutput)")
        #expect(run.output == "It is 42.\nYou asked about 6 times 7.\n")
        #expect(run.errorOutput == "→ calculate {\"expression\":\"6*7\"}\n← calculate done: 42\n")
        let last = try #require(fake.requests.last?.json)
        #expect(last["model"] == "fake-chat")
        guard case .array(let messages)? = last["messages"] else {
            Issue.record("no messages")
            return
        }
        #expect(messages.first?["content"] == "Be brief.")
        #expect(messages.count == 6, "system, user, assistant tool call, tool result, assistant, user")
        guard case .array(let tools)? = last["tools"] else {
            Issue.record("no tools")
            return
        }
        #expect(Set(tools.compactMap { $0["function"]?["name"]?.stringValue }) == ["calculate", "get_current_time"])

        fake.enqueueChat(.text(["Arr."]))
        let instructed = await CommandRun.run(["chat", "--instructions", "Speak like a pirate."], environment: Self.environment(fake), input: "Hi\n")
        guard case .array(let pirateMessages)? = fake.requests.last?.json?["messages"] else {
            Issue.record("no messages")
            return
        }
        #expect(pirateMessages.first?["content"] == "Speak like a pirate.")
        #expect(instructed.output == "Arr.\n")
        await fake.shutdown()
    }

    @Test("talk in process: transcription, model and speech from the configured providers")
    func talk() async throws {
        let fake = try FakeOpenAIServer()
        let work = try TemporaryDirectory()
        defer { work.remove() }
        try TalkCommandTests.writeTone(work.path("question.wav"), seconds: 1)
        fake.enqueueTranscription(.text("What time is it?"))
        fake.enqueueChat(.text(["It is ", "noon."]))
        fake.enqueueSpeech(.samples(Array(repeating: 1000, count: 12_000)))

        let run = await CommandRun.run(["talk", "question.wav", "-o", "reply.wav"], environment: Self.environment(fake), directory: work.url)
        #expect(run.status == 0, "\(run.errorOutput)")
        #expect(run.output == "You: What time is it?\nAgent: It is noon.\n")
        #expect(run.errorOutput == "Wrote reply.wav (0.5 s of speech).\n")
        let reply = try WAVFile.read(Data(contentsOf: work.url.appendingPathComponent("reply.wav")))
        #expect(reply.format == AudioFormat(sampleRate: 24_000))
        #expect(reply.samples.count == 12_000)
        #expect(fake.requests.map(\.path) == ["/v1/audio/transcriptions", "/v1/chat/completions", "/v1/audio/speech"])
        await fake.shutdown()
    }

    @Test("a configuration problem is one line, exit 1")
    func badConfiguration() async {
        let run = await CommandRun.run(["say", "Hi", "-o", "x.wav"], environment: ["PARLEY_TTS_URL": "ftp://nope"])
        #expect(run.status == 1)
        #expect(run.errorOutput == "error: PARLEY_TTS_URL: an http(s) base URL is required for an OpenAI-compatible provider, e.g. https://api.openai.com/v1\n")
    }
}

extension Dictionary {
    /// The dictionary with `other`'s entries added, `other` winning.
    static func + (left: Self, right: Self) -> Self { left.merging(right) { _, new in new } }
}
