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

    func run(_ context: CommandContext) async throws {
        throw CommandFailure("'parley talk' is not available in this build yet: the embedded speech engines have not landed")
    }
}
