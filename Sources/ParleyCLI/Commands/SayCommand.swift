import Foundation
import ParleyCore

/// `parley say`: speaks text to a WAV file.
struct SayCommand: ParleyCommand {
    static let spec = CommandSpec(
        name: "say",
        abstract: "Speak text to a WAV file.",
        discussion: "Uses the Piper voice in process (flite with PARLEY_TTS=flite), or the OpenAI-compatible speech service PARLEY_TTS_URL names.",
        arguments: [ArgumentSpec(name: "text", arity: .zeroOrMore, help: "The text to speak; read from standard input when omitted.")],
        options: [
            .option("output", short: "o", value: "file", required: true, help: "The WAV file to write."),
            .option("voice", value: "name", help: "The voice to speak with (default: the synthesizer's own)."),
            .option("speed", value: "rate", help: "Speaking rate: 1 is normal, from 0.25 to 4."),
        ],
        environment: [
            EnvironmentSpec("PARLEY_TTS_URL", "An OpenAI-compatible speech API to use instead of the embedded voice."),
            EnvironmentSpec("PARLEY_TTS_VOICE", "The default voice for that API."),
        ],
        examples: ["parley say \"Hello there.\" -o hello.wav", "echo \"Hello there.\" | parley say -o hello.wav"],
        command: SayCommand.self
    )

    /// The text from the command line; `nil` reads standard input.
    var text: String?
    /// Where the WAV file goes.
    var outputPath: String
    /// How to speak.
    var options: SpeechOptions

    init(_ arguments: ParsedArguments) throws(UsageError) {
        let words = arguments.arguments("text")
        text = words.isEmpty ? nil : words.joined(separator: " ")
        outputPath = try arguments.value("output", .nonEmpty) ?? ""
        options = SpeechOptions(
            voice: try arguments.value("voice", .nonEmpty),
            speed: try arguments.value("speed", .number(in: 0.25...4)) ?? 1
        )
    }

    /// The most text read from standard input.
    static let maximumInputBytes = 100 << 10

    func run(_ context: CommandContext) async throws {
        let words: String
        if let text { words = text } else { words = try await readStandardInput(context) }
        let trimmed = words.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw CommandFailure("nothing to say: the text is empty") }
        let synthesizer = try InProcessEngines(context).synthesizer(voice: options.voice)
        let samples = try await context.withProgress("Speaking") {
            var samples: [Int16] = []
            for try await chunk in synthesizer.synthesize(trimmed, options: options) { samples += chunk }
            return samples
        }
        guard !samples.isEmpty else { throw CommandFailure("the speech synthesizer produced no audio") }
        try AudioFiles.writeMono(samples, sampleRate: synthesizer.sampleRate, to: outputPath, context: context)
        let seconds = String(format: "%.1f", Double(samples.count) / Double(synthesizer.sampleRate))
        context.errorOutput.line("Wrote \(outputPath) (\(seconds) s of speech).")
    }

    /// The text piped to standard input; a terminal there means the text is missing.
    private func readStandardInput(_ context: CommandContext) async throws -> String {
        guard !context.input.isTerminal else {
            throw UsageError("missing text: give it as arguments or on standard input", commandPath: [Self.spec.name])
        }
        let data = try await context.input.readAll(Self.maximumInputBytes)
        return String(decoding: data, as: UTF8.self)
    }
}
