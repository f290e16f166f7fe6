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
            .flag("json", help: "Print one JSON object per file, with the text and timings."),
        ],
        environment: [
            EnvironmentSpec("PARLEY_ASR_URL", "An OpenAI-compatible transcription API to use instead of whisper.cpp."),
            EnvironmentSpec("PARLEY_MODEL_DIR", "Where the embedded models are (default ~/.cache/parley/models)."),
        ],
        examples: ["parley transcribe question.wav", "parley transcribe *.wav --json"],
        command: TranscribeCommand.self
    )

    /// The files, in order.
    var paths: [String]
    /// Whether to print JSON lines.
    var printsJSON: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        paths = arguments.arguments("file")
        printsJSON = arguments.flag("json")
    }

    func run(_ context: CommandContext) async throws {
        throw CommandFailure("'parley transcribe' is not available in this build yet: the embedded speech engines have not landed")
    }
}
