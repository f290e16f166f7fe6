import Foundation

/// The tool's command tree: `parley` and every command under it.
enum CommandCatalog {
    /// The name of the tool.
    static let toolName = "parley"

    /// `parley` itself.
    static let root = CommandSpec(
        name: toolName,
        abstract: "Parley — a self-hostable, voice-first AI agent.",
        subcommands: [
            ServeLauncher.spec, ChatCommand.spec, TalkCommand.spec, TranscribeCommand.spec,
            SayCommand.spec, EvalCommand.spec, TokenCommand.spec, ConsoleTokenCommand.spec, AgentsCommands.spec, TwilioCommand.spec, SIPCommand.spec, help,
        ]
    )

    /// `parley help <command>`; the parser answers it before looking up commands.
    static let help = CommandSpec(
        name: "help",
        abstract: "Show the help of a command.",
        arguments: [ArgumentSpec(name: "command", arity: .zeroOrMore, help: "The command, e.g. 'say' or 'agents create'.")],
        examples: ["parley help talk", "parley help agents create"]
    )

    /// The declaration of the command at `path`, if there is one.
    static func spec(at path: [String]) -> CommandSpec? {
        var spec = root
        for name in path {
            guard let subcommand = spec.subcommand(named: name) else { return nil }
            spec = subcommand
        }
        return spec
    }
}
