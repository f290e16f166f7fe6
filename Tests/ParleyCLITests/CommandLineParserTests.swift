import Foundation
import Testing
@testable import ParleyCLI

/// A command that is never run: the parser tests only need its declaration.
private struct ProbeCommand: ParleyCommand {
    static let spec = CommandSpec(
        name: "probe",
        abstract: "A probe.",
        arguments: [
            ArgumentSpec(name: "first", arity: .required, help: "First."),
            ArgumentSpec(name: "second", arity: .optional, help: "Second."),
            ArgumentSpec(name: "rest", arity: .zeroOrMore, help: "Rest."),
        ],
        options: [
            .option("output", short: "o", value: "file", help: "Output."),
            .option("count", value: "n", help: "Count."),
            .flag("json", short: "j", help: "JSON."),
        ],
        command: ProbeCommand.self
    )

    init(_ arguments: ParsedArguments) throws(UsageError) {}
    func run(_ context: CommandContext) async throws {}
}

private let root = CommandSpec(
    name: "tool",
    abstract: "Tool.",
    subcommands: [
        ProbeCommand.spec,
        CommandSpec(name: "group", abstract: "Group.", subcommands: [
            CommandSpec(name: "leaf", abstract: "Leaf.", arguments: [ArgumentSpec(name: "id", arity: .oneOrMore, help: "Ids.")], command: ProbeCommand.self),
        ]),
    ]
)

private func parse(_ tokens: [String]) throws(UsageError) -> ParsedArguments {
    guard case .run(_, let parsed) = try CommandLineParser(root: root).parse(tokens) else {
        throw UsageError("not a run", commandPath: [])
    }
    return parsed
}

private func failure(_ tokens: [String]) -> UsageError? {
    do {
        _ = try CommandLineParser(root: root).parse(tokens)
        return nil
    } catch {
        return error
    }
}

@Suite("Command-line parser")
struct CommandLineParserTests {
    @Test("every way of writing an option value")
    func optionSpellings() throws {
        for tokens in [
            ["probe", "a", "--output", "x.wav"], ["probe", "a", "--output=x.wav"],
            ["probe", "a", "-o", "x.wav"], ["probe", "a", "-ox.wav"], ["probe", "--output", "x.wav", "a"],
        ] {
            let parsed = try parse(tokens)
            #expect(parsed.string("output") == "x.wav", "\(tokens)")
            #expect(parsed.argument("first") == "a", "\(tokens)")
        }
        #expect(try parse(["probe", "a", "--output="]).string("output") == "")
        #expect(try parse(["probe", "a", "--count", "-3"]).string("count") == "-3")
    }

    @Test("flags, short and long, and their absence")
    func flags() throws {
        #expect(try parse(["probe", "a", "--json"]).flag("json"))
        #expect(try parse(["probe", "-j", "a"]).flag("json"))
        #expect(try !parse(["probe", "a"]).flag("json"))
    }

    @Test("positionals fill required, then optional, then variadic; -- and - are positional")
    func positionals() throws {
        let one = try parse(["probe", "a"])
        #expect(one.argument("first") == "a" && one.argument("second") == nil && one.arguments("rest").isEmpty)
        let many = try parse(["probe", "a", "b", "c", "d"])
        #expect(many.argument("second") == "b")
        #expect(many.arguments("rest") == ["c", "d"])
        let dashed = try parse(["probe", "-", "--", "--json", "-o"])
        #expect(dashed.argument("first") == "-")
        #expect(dashed.argument("second") == "--json")
        #expect(dashed.arguments("rest") == ["-o"])
        #expect(!dashed.flag("json"))
        #expect(try parse(["group", "leaf", "x", "y"]).arguments("id") == ["x", "y"])
    }

    @Test("help anywhere before --, help <command>, --version")
    func helpAndVersion() throws {
        let parser = CommandLineParser(root: root)
        func path(_ tokens: [String]) throws -> [String]? {
            if case .help(let path) = try parser.parse(tokens) { return path }
            return nil
        }
        #expect(try path(["--help"]) == [])
        #expect(try path(["-h"]) == [])
        #expect(try path(["probe", "a", "--output", "x", "--help"]) == ["probe"])
        #expect(try path(["group", "-h"]) == ["group"])
        #expect(try path(["group", "leaf", "--help"]) == ["group", "leaf"])
        #expect(try path(["help", "group", "leaf"]) == ["group", "leaf"])
        #expect(try path(["help"]) == [])
        #expect(try path(["probe", "--", "--help"]) == nil)
        guard case .version = try parser.parse(["--version"]) else {
            Issue.record("--version is not the version")
            return
        }
    }

    @Test("usage errors name the problem and the command", arguments: [
        ([], "missing command (probe, group)", []),
        (["--bogus"], "unknown option '--bogus'", []),
        (["prob"], "unknown command 'prob'; did you mean 'probe'?", []),
        (["xyzzy"], "unknown command 'xyzzy'", []),
        (["group"], "missing command (leaf)", ["group"]),
        (["group", "leef"], "unknown command 'leef'; did you mean 'leaf'?", ["group"]),
        (["group", "leaf"], "missing argument <id>", ["group", "leaf"]),
        (["help", "nope"], "unknown command 'nope'", ["help"]),
        (["help", "probe", "deeper"], "'probe' has no subcommand 'deeper'", ["help"]),
        (["probe"], "missing argument <first>", ["probe"]),
        (["probe", "a", "--ouput", "x"], "unknown option '--ouput'; did you mean '--output'?", ["probe"]),
        (["probe", "a", "-x"], "unknown option '-x'", ["probe"]),
        (["probe", "a", "-jx"], "unknown option '-jx'", ["probe"]),
        (["probe", "a", "--output"], "missing value for --output <file>", ["probe"]),
        (["probe", "a", "-o"], "missing value for -o <file>", ["probe"]),
        (["probe", "a", "--output", "--json"], "missing value for --output <file>", ["probe"]),
        (["probe", "a", "--json=yes"], "--json takes no value", ["probe"]),
        (["probe", "a", "-o", "x", "--output", "y"], "--output <file> was given more than once", ["probe"]),
        (["probe", "a", "--json", "-j"], "--json was given more than once", ["probe"]),
    ] as [([String], String, [String])])
    func usageErrors(tokens: [String], message: String, path: [String]) {
        let error = failure(tokens)
        #expect(error?.message == message)
        #expect(error?.commandPath == path)
    }

    @Test("a required option that is missing")
    func requiredOption() {
        let spec = CommandSpec(
            name: "tool", abstract: "Tool.",
            options: [.option("user", value: "id", required: true, help: "User.")], command: ProbeCommand.self
        )
        #expect(throws: UsageError("missing option --user <id>", commandPath: [])) {
            try CommandLineParser(root: spec).parse([])
        }
    }

    @Test("values convert or say what was expected")
    func valueParsers() throws {
        let parsed = try parse(["probe", "a", "--count", "70000", "--output", "ftp://x"])
        #expect(throws: UsageError("invalid value '70000' for --count: expected a whole number from 0 to 65535", commandPath: ["probe"])) {
            try parsed.value("count", .port)
        }
        #expect(throws: UsageError("invalid value 'ftp://x' for --output: expected an http:// or https:// URL such as http://127.0.0.1:8080", commandPath: ["probe"])) {
            try parsed.value("output", .serverURL)
        }
        #expect(try parse(["probe", "a", "--count", "0.5"]).value("count", .number(in: 0.25...4)) == 0.5)
        #expect(throws: UsageError("invalid value '9' for --count: expected a number from 0.25 to 4", commandPath: ["probe"])) {
            try parse(["probe", "a", "--count", "9"]).value("count", .number(in: 0.25...4))
        }
        #expect(try parse(["probe", "a"]).value("count", .port) == nil)
    }

    @Test("edit distance for suggestions")
    func editDistance() {
        #expect(CommandLineParser.editDistance("sya", "say") == 2)
        #expect(CommandLineParser.editDistance("chat", "chat") == 0)
        #expect(CommandLineParser.editDistance("", "abc") == 3)
        #expect(CommandLineParser.suggestion(for: "tokn", among: ["token", "talk"]) == "; did you mean 'token'?")
        #expect(CommandLineParser.suggestion(for: "zzzzzz", among: ["token", "talk"]) == "")
    }
}

@Suite("Durations")
struct DurationTextTests {
    @Test("accepted spellings", arguments: [
        ("90s", Duration.seconds(90)), ("10m", .seconds(600)), ("2h", .seconds(7200)), ("1h30m", .seconds(5400)),
        ("250ms", .milliseconds(250)), ("1d", .seconds(86_400)), ("2H", .seconds(7200)), ("0s", .zero),
    ])
    func parses(text: String, duration: Duration) {
        #expect(DurationText.parse(text) == duration)
    }

    @Test("refused spellings", arguments: ["", "10", "m", "10x", "1.5h", "-5m", "10 m", "h10", "9999999999h", "٣m"])
    func refuses(text: String) {
        #expect(DurationText.parse(text) == nil)
    }

    @Test("formatting reads back")
    func formats() {
        #expect(DurationText.format(.seconds(86_400)) == "24h")
        #expect(DurationText.format(.seconds(5400)) == "1h30m")
        #expect(DurationText.format(.seconds(90)) == "1m30s")
        #expect(DurationText.format(.milliseconds(1500)) == "1s500ms")
        #expect(DurationText.format(.zero) == "0s")
        for text in ["2h", "1h30m", "45s", "10m5s"] {
            #expect(DurationText.parse(DurationText.format(DurationText.parse(text)!)) == DurationText.parse(text))
        }
    }

    @Test("the --ttl parser refuses zero and more than the maximum")
    func bounded() {
        let parser = ValueParser<Duration>.duration(maximum: .seconds(86_400))
        guard case .success(let value) = parser.parse("24h") else {
            Issue.record("24h refused")
            return
        }
        #expect(value == .seconds(86_400))
        guard case .failure(let tooLong) = parser.parse("25h"), case .failure(let zero) = parser.parse("0s") else {
            Issue.record("25h or 0s accepted")
            return
        }
        #expect(tooLong.reason == "the longest allowed is 24h")
        #expect(zero.reason == "expected a duration such as 90s, 10m or 2h")
    }
}
