import Foundation
import ParleyCore

/// `parley talk`: one voice turn from a WAV file.
struct TalkCommand: ParleyCommand {
    static let spec = CommandSpec(
        name: "talk",
        abstract: "One voice turn from a WAV file: print what was heard and the reply, and speak the reply.",
        discussion: "In process by default, with the same engines and PARLEY_* settings as 'parley serve'. "
            + "With --url the turn goes to a running server over the OpenAI Realtime protocol.",
        arguments: [ArgumentSpec(name: "file", arity: .required, help: "A WAV file with what the user says (any rate, mono or stereo).")],
        options: [
            .option("out", short: "o", value: "file", help: "Write the spoken reply to this WAV file (24 kHz mono)."),
            .option("url", value: "url", help: "A running Parley server, e.g. http://127.0.0.1:8080."),
            .option("agent", value: "id", help: "The server's agent to talk to (with --url; default: the server's own)."),
        ],
        environment: [
            EnvironmentSpec("PARLEY_SERVER_SECRET", "Credentials for --url (else the secret in ./.parley)."),
            EnvironmentSpec("PARLEY_LLM_URL", "An OpenAI-compatible chat API instead of the embedded model."),
            EnvironmentSpec("PARLEY_SYSTEM_PROMPT", "The agent's instructions in process."),
        ],
        examples: ["parley talk question.wav --out reply.wav", "parley talk question.wav --url http://127.0.0.1:8080 --agent agent_123"],
        command: TalkCommand.self
    )

    /// The user's audio.
    var inputPath: String
    /// Where the spoken reply goes, if anywhere.
    var outputPath: String?
    /// A running server to talk through.
    var serverURL: URL?
    /// The server's agent.
    var agentID: String?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        inputPath = arguments.argument("file") ?? ""
        outputPath = try arguments.value("out", .nonEmpty)
        serverURL = try arguments.value("url", .serverURL)
        agentID = try arguments.value("agent", .nonEmpty)
        if agentID != nil, serverURL == nil { throw arguments.usageError("--agent needs --url: agents live on a server") }
    }

    /// The longest input: what a session's input buffer holds.
    static let maximumSeconds = VoiceSessionConfiguration().maximumInputBufferMs / 1000
    /// The rate audio is sent and replies are written at: the realtime protocol's.
    static let sampleRate = AudioFormat.realtime.sampleRate

    func run(_ context: CommandContext) async throws {
        let audio = try AudioFiles.readMono(inputPath, context: context)
        guard audio.duration <= Double(Self.maximumSeconds) else {
            throw CommandFailure("\(inputPath) is \(Int(audio.duration)) s long; one turn is at most \(Self.maximumSeconds) s")
        }
        let samples = SampleConversion.pcm16(AudioFiles.resample(audio.samples, from: audio.sampleRate, to: Self.sampleRate))
        if let serverURL {
            let server = try ServerConnection.resolve(serverURL, context: context)
            try await present(RemoteTalk(server: server, agentID: agentID, speaksReply: outputPath != nil).run(samples), context)
            return
        }
        let engines = try InProcessEngines(context)
        let recognizer = try engines.recognizer()
        let synthesizer = try engines.synthesizer()
        let (model, stop) = try await context.withProgress("Starting the language model") { try await engines.languageModel() }
        let providers = VoiceSessionProviders(
            recognizer: recognizer, model: model, synthesizer: synthesizer,
            tools: ToolRegistry([CalculatorTool(), CurrentTimeTool()]),
            makeVoiceActivityDetector: { EnergyVAD() }, makeResampler: AudioFiles.resampler(from:to:)
        )
        let configuration = VoiceSessionConfiguration(instructions: engines.settings.systemPrompt, speaksResponses: outputPath != nil)
        do {
            try await present(InProcessTalk(providers: providers, configuration: configuration).run(samples, sampleRate: Self.sampleRate), context)
        } catch {
            await stop()
            throw error
        }
        await stop()
    }

    /// Prints what was heard and the reply as they come, then writes the spoken reply.
    private func present(_ events: AsyncThrowingStream<TalkEvent, any Error>, _ context: CommandContext) async throws {
        let style = context.outputStyle
        var progress: ProgressIndicator? = ProgressIndicator("Listening to \(inputPath)", context: context)
        var replyAudio: [Int16] = []
        var replyStarted = false
        do {
            for try await event in events {
                await progress?.finish()
                progress = nil
                switch event {
                case .heard(let text):
                    context.output.line(style.bold("You:") + " " + text)
                case .replyText(let delta):
                    if !replyStarted { context.output.write(style.bold("Agent:") + " ") }
                    replyStarted = true
                    context.output.write(delta)
                case .replyAudio(let samples):
                    replyAudio += samples
                case .toolStarted(let name, let arguments):
                    context.errorOutput.line(context.errorStyle.dim(ToolActivityText.started(name: name, arguments: arguments)))
                case .toolFinished(let name, let output, let isError):
                    context.errorOutput.line(context.errorStyle.dim(ToolActivityText.finished(name: name, output: output, isError: isError)))
                }
            }
        } catch {
            await progress?.finish()
            if replyStarted { context.output.line() }
            throw error
        }
        if replyStarted { context.output.line() } else { context.warn("the agent's reply has no words") }
        guard let outputPath else { return }
        try AudioFiles.writeMono(replyAudio, sampleRate: Self.sampleRate, to: outputPath, context: context)
        let seconds = String(format: "%.1f", Double(replyAudio.count) / Double(Self.sampleRate))
        context.errorOutput.line("Wrote \(outputPath) (\(seconds) s of speech).")
    }
}
