import Foundation

/// A named option: `--long <value>` (or `-s <value>`), or a flag when it takes no value.
struct OptionSpec: Sendable, Hashable {
    /// The long name without dashes, e.g. `output`; also the key parsed values are stored under.
    var long: String
    /// The one-letter short name, e.g. `o` for `-o`.
    var short: Character?
    /// The placeholder shown for the value, e.g. `file`; `nil` makes the option a flag.
    var valueName: String?
    /// One line saying what the option does.
    var help: String
    /// Whether the command refuses to run without it.
    var isRequired: Bool

    /// An option that takes a value.
    static func option(_ long: String, short: Character? = nil, value: String, required: Bool = false, help: String) -> OptionSpec {
        OptionSpec(long: long, short: short, valueName: value, help: help, isRequired: required)
    }

    /// A flag: present or absent, no value.
    static func flag(_ long: String, short: Character? = nil, help: String) -> OptionSpec {
        OptionSpec(long: long, short: short, valueName: nil, help: help, isRequired: false)
    }

    /// Whether the option is a flag.
    var isFlag: Bool { valueName == nil }

    /// How the option is written in messages: `--output <file>` or `--json`.
    var displayName: String {
        valueName.map { "--\(long) <\($0)>" } ?? "--\(long)"
    }
}

/// A positional argument.
struct ArgumentSpec: Sendable, Hashable {
    /// How many values the argument takes.
    enum Arity: Sendable, Hashable {
        /// Exactly one.
        case required
        /// Zero or one.
        case optional
        /// One or more; only the last argument may be variadic.
        case oneOrMore
        /// Any number, including none; only the last argument may be variadic.
        case zeroOrMore
    }

    /// The placeholder name, e.g. `file`; also the key parsed values are stored under.
    var name: String
    /// How many values it takes.
    var arity: Arity
    /// One line saying what it is.
    var help: String

    /// How the argument is written in usage lines: `<file>`, `[<text>]`, `<file>...`.
    var usage: String {
        switch arity {
        case .required: "<\(name)>"
        case .optional: "[<\(name)>]"
        case .oneOrMore: "<\(name)>..."
        case .zeroOrMore: "[<\(name)>...]"
        }
    }
}

/// An environment variable a command reads, listed in its help.
struct EnvironmentSpec: Sendable, Hashable {
    /// The variable's name, e.g. `PARLEY_SERVER_SECRET`.
    var name: String
    /// What it is for.
    var help: String

    /// Creates an entry.
    init(_ name: String, _ help: String) {
        self.name = name
        self.help = help
    }
}

/// The declaration of one command: its name, help, arguments, options and subcommands.
///
/// A command either runs (`command` is set) or groups subcommands (`subcommands` is not empty).
struct CommandSpec: Sendable {
    /// The word that selects the command, e.g. `say`.
    var name: String
    /// One line saying what it does, shown in lists and at the top of its help.
    var abstract: String
    /// Paragraphs shown after the abstract in the command's help.
    var discussion: String?
    /// Positional arguments, in order.
    var arguments: [ArgumentSpec]
    /// Options and flags, in the order help lists them.
    var options: [OptionSpec]
    /// Environment variables the command reads.
    var environment: [EnvironmentSpec]
    /// Example invocations shown at the end of the help.
    var examples: [String]
    /// Subcommands, for a group such as `agents`.
    var subcommands: [CommandSpec]
    /// The type that runs the command once its arguments are parsed.
    var command: (any ParleyCommand.Type)?

    /// Creates a command declaration.
    init(
        name: String, abstract: String, discussion: String? = nil,
        arguments: [ArgumentSpec] = [], options: [OptionSpec] = [],
        environment: [EnvironmentSpec] = [], examples: [String] = [],
        subcommands: [CommandSpec] = [], command: (any ParleyCommand.Type)? = nil
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.arguments = arguments
        self.options = options
        self.environment = environment
        self.examples = examples
        self.subcommands = subcommands
        self.command = command
    }

    /// The subcommand called `name`.
    func subcommand(named name: String) -> CommandSpec? {
        subcommands.first { $0.name == name }
    }

    /// The option whose long name is `long`.
    func option(long: String) -> OptionSpec? {
        options.first { $0.long == long }
    }

    /// The option whose short name is `short`.
    func option(short: Character) -> OptionSpec? {
        options.first { $0.short == short }
    }
}

/// A command that can run: built from its parsed arguments, then run with the process's I/O.
protocol ParleyCommand: Sendable {
    /// The command's declaration.
    static var spec: CommandSpec { get }
    /// Checks and converts the parsed arguments.
    /// - Throws: `UsageError` for a value that is not acceptable.
    init(_ arguments: ParsedArguments) throws(UsageError)
    /// Runs the command; throws `CommandFailure` (or any error) for a runtime failure.
    func run(_ context: CommandContext) async throws
    /// Whether the command sees the values of `./.env` in its environment (default `true`).
    static var readsDotEnvFile: Bool { get }
}

extension ParleyCommand {
    static var readsDotEnvFile: Bool { true }
}
