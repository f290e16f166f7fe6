import Foundation
import ParleyCore

/// `parley transcribe`: prints what is said in WAV files.
struct TranscribeCommand: ParleyCommand {
    static let spec = CommandSpec(
        name: "transcribe",
        abstract: "Print the transcript of each WAV file.",
        discussion: "Uses whisper.cpp in process, or the OpenAI-compatible transcription service PARLEY_ASR_URL names. "
            + "Any sample rate and channel count is accepted. With several files, each line starts with the file's name.",
        arguments: [ArgumentSpec(name: "file", arity: .oneOrMore, help: "A WAV file to transcribe.")],
        options: [
            .flag("json", help: "Print one JSON object per file, with the text, language and timings."),
            .option("language", value: "code", help: "The spoken language (ISO-639-1, e.g. de); by default a multilingual model detects it."),
            .option("prompt", value: "text", help: "Text in the expected style and vocabulary, e.g. names to spell right."),
        ],
        environment: [
            EnvironmentSpec("PARLEY_ASR_URL", "An OpenAI-compatible transcription API to use instead of whisper.cpp."),
            EnvironmentSpec("PARLEY_ASR_MODEL", "The Whisper model: tiny.en (default) or base."),
            EnvironmentSpec("PARLEY_MODEL_DIR", "Where the embedded models are (default ~/.cache/parley/models)."),
        ],
        examples: ["parley transcribe question.wav", "parley transcribe *.wav --json", "PARLEY_ASR_MODEL=base parley transcribe frage.wav --language de"],
        command: TranscribeCommand.self
    )

    /// The files, in order.
    var paths: [String]
    /// Whether to print JSON lines.
    var printsJSON: Bool
    /// The language and prompt the recognizer is given.
    var hints: TranscriptionHints

    init(_ arguments: ParsedArguments) throws(UsageError) {
        paths = arguments.arguments("file")
        printsJSON = arguments.flag("json")
        hints = TranscriptionHints(language: try arguments.value("language", .nonEmpty), prompt: try arguments.value("prompt", .nonEmpty))
    }

    func run(_ context: CommandContext) async throws {
        let engines = try InProcessEngines(context)
        let recognizer = try await context.withProgress("Loading the speech recognizer") { try engines.recognizer() }
        var failures = 0
        for path in paths {
            do {
                let result = try await transcribe(path, with: recognizer, context: context)
                if printsJSON {
                    context.output.line(try result.jsonLine())
                } else {
                    context.output.line(paths.count == 1 ? result.text : "\(path): \(result.text)")
                }
            } catch {
                failures += 1
                let message = (error as? CommandFailure)?.message ?? "\(path): \(ParleyCommandLine.describe(error))"
                context.errorOutput.line(context.errorStyle.error("error:") + " " + message)
            }
        }
        if failures > 0 { throw CommandFailure.alreadyReported }
    }

    /// The transcript of one file, with timings.
    private func transcribe(_ path: String, with recognizer: any SpeechRecognizer, context: CommandContext) async throws -> FileTranscript {
        let audio = try AudioFiles.readMono(path, context: context)
        let samples = AudioFiles.resample(audio.samples, from: audio.sampleRate, to: recognizer.sampleRate)
        let clock = ContinuousClock()
        let started = clock.now
        let transcription = try await context.withProgress("Transcribing \(path)") {
            try await recognizer.transcribe(samples, isFinal: true, hints: hints)
        }
        return FileTranscript(
            file: path, text: transcription.text.trimmingCharacters(in: .whitespacesAndNewlines), language: transcription.language,
            audioSeconds: audio.duration, processingSeconds: (clock.now - started).timeInterval
        )
    }

    /// One line of `--json` output.
    struct FileTranscript: Encodable {
        var file: String
        var text: String
        /// The language heard in, when the recognizer says.
        var language: String?
        var audioSeconds: Double
        var processingSeconds: Double

        enum CodingKeys: String, CodingKey {
            case file, text, language, audioSeconds = "audio_seconds", processingSeconds = "processing_seconds", realTimeFactor = "real_time_factor"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(file, forKey: .file)
            try container.encode(text, forKey: .text)
            try container.encodeIfPresent(language, forKey: .language)
            try container.encode(Self.rounded(audioSeconds), forKey: .audioSeconds)
            try container.encode(Self.rounded(processingSeconds), forKey: .processingSeconds)
            try container.encode(Self.rounded(audioSeconds > 0 ? processingSeconds / audioSeconds : 0), forKey: .realTimeFactor)
        }

        /// The object as one line of JSON with sorted keys.
        func jsonLine() throws -> String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return String(decoding: try encoder.encode(self), as: UTF8.self)
        }

        /// `value` to the millisecond.
        private static func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
    }
}
