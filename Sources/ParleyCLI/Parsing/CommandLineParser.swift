import Foundation

/// What a command line asks for.
enum ParseOutcome: Sendable {
    /// Run `spec`'s command with `arguments`.
    case run(CommandSpec, ParsedArguments)
    /// Show the help of the command at the path (names after `parley`).
    case help([String])
    /// Show the version.
    case version
}

/// Parses a command line against a tree of `CommandSpec`s.
///
/// Rules: `--name value`, `--name=value`, `-n value` and `-nvalue` for options; `--flag` and
/// `-f` for flags; `--` ends options; `-` is a positional (standard input). `-h`/`--help`
/// anywhere before `--` asks for help; `parley help <command>` too; `parley --version`.
struct CommandLineParser {
    /// The tool's command (`parley`) with every subcommand.
    let root: CommandSpec

    /// Parses `tokens` (the arguments without the program name).
    /// - Throws: `UsageError` saying what is wrong.
    func parse(_ tokens: [String]) throws(UsageError) -> ParseOutcome {
        var spec = root
        var path: [String] = []
        var rest = tokens[...]
        while !spec.subcommands.isEmpty {
            guard let word = rest.first else {
                throw UsageError("missing command (\(spec.subcommands.map(\.name).joined(separator: ", ")))", commandPath: path)
            }
            if Self.isHelp(word) { return .help(path) }
            if path.isEmpty, word == "--version" { return .version }
            if path.isEmpty, word == "help" {
                let words = Array(rest.dropFirst())
                return .help(words.contains(where: Self.isHelp) ? ["help"] : try resolve(words))
            }
            if word.hasPrefix("-"), word != "-" {
                throw UsageError("unknown option '\(word)'", commandPath: path)
            }
            guard let subcommand = spec.subcommand(named: word) else {
                throw UsageError(
                    "unknown command '\(word)'" + Self.suggestion(for: word, among: spec.subcommands.map(\.name)),
                    commandPath: path
                )
            }
            path.append(word)
            spec = subcommand
            rest = rest.dropFirst()
        }
        if rest.prefix(while: { $0 != "--" }).contains(where: Self.isHelp) { return .help(path) }
        return .run(spec, try parseArguments(Array(rest), for: spec, at: path))
    }

    /// The path of the command named by `words` (`parley help agents create`).
    private func resolve(_ words: [String]) throws(UsageError) -> [String] {
        var spec = root
        var path: [String] = []
        for word in words {
            guard let subcommand = spec.subcommand(named: word) else {
                let candidates = spec.subcommands.map(\.name)
                throw UsageError(
                    candidates.isEmpty
                        ? "'\(path.joined(separator: " "))' has no subcommand '\(word)'"
                        : "unknown command '\(word)'" + Self.suggestion(for: word, among: candidates),
                    commandPath: ["help"]
                )
            }
            path.append(word)
            spec = subcommand
        }
        return path
    }

    /// Parses the options and positional arguments of a command that runs.
    private func parseArguments(_ tokens: [String], for spec: CommandSpec, at path: [String]) throws(UsageError) -> ParsedArguments {
        var parsed = ParsedArguments(commandPath: path)
        var positionals: [String] = []
        var index = 0
        var optionsEnded = false

        func fail(_ message: String) -> UsageError { UsageError(message, commandPath: path) }
        func record(_ option: OptionSpec, inlineValue: String?, writtenAs written: String) throws(UsageError) {
            guard !parsed.contains(option.long) else { throw fail("\(option.displayName) was given more than once") }
            if option.isFlag {
                guard inlineValue == nil else { throw fail("--\(option.long) takes no value") }
                parsed.record(option: option.long, value: nil)
                return
            }
            if let inlineValue {
                parsed.record(option: option.long, value: inlineValue)
                return
            }
            guard index + 1 < tokens.count, !Self.looksLikeOption(tokens[index + 1]) else {
                throw fail("missing value for \(written) <\(option.valueName ?? "value")>")
            }
            index += 1
            parsed.record(option: option.long, value: tokens[index])
        }

        while index < tokens.count {
            let token = tokens[index]
            if optionsEnded || !Self.looksLikeOption(token) {
                positionals.append(token)
            } else if token == "--" {
                optionsEnded = true
            } else if token.hasPrefix("--") {
                let body = token.dropFirst(2)
                let name = String(body.prefix { $0 != "=" })
                let inlineValue = body.firstIndex(of: "=").map { String(body[body.index(after: $0)...]) }
                guard let option = spec.option(long: name) else {
                    throw fail("unknown option '--\(name)'" + Self.suggestion(for: "--\(name)", among: spec.options.map { "--\($0.long)" }))
                }
                try record(option, inlineValue: inlineValue, writtenAs: "--\(name)")
            } else {
                let letters = token.dropFirst()
                guard let letter = letters.first, let option = spec.option(short: letter) else {
                    throw fail("unknown option '\(token)'")
                }
                let attached = String(letters.dropFirst())
                if option.isFlag, !attached.isEmpty { throw fail("unknown option '\(token)'") }
                try record(option, inlineValue: attached.isEmpty ? nil : attached, writtenAs: "-\(letter)")
            }
            index += 1
        }

        try assign(positionals, to: spec.arguments, in: &parsed, fail: fail)
        if let missing = spec.options.first(where: { $0.isRequired && !parsed.contains($0.long) }) {
            throw fail("missing option \(missing.displayName)")
        }
        return parsed
    }

    /// Hands positional values to the declared arguments in order.
    private func assign(
        _ values: [String], to arguments: [ArgumentSpec], in parsed: inout ParsedArguments, fail: (String) -> UsageError
    ) throws(UsageError) {
        var remaining = values[...]
        for (position, argument) in arguments.enumerated() {
            let neededLater = arguments[(position + 1)...].filter { $0.arity == .required || $0.arity == .oneOrMore }.count
            switch argument.arity {
            case .required:
                guard let value = remaining.first else { throw fail("missing argument \(argument.usage)") }
                parsed.record(argument: argument.name, values: [value])
                remaining = remaining.dropFirst()
            case .optional:
                if remaining.count > neededLater, let value = remaining.first {
                    parsed.record(argument: argument.name, values: [value])
                    remaining = remaining.dropFirst()
                }
            case .oneOrMore, .zeroOrMore:
                let count = remaining.count - neededLater
                if argument.arity == .oneOrMore, count < 1 { throw fail("missing argument <\(argument.name)>") }
                parsed.record(argument: argument.name, values: Array(remaining.prefix(max(count, 0))))
                remaining = remaining.dropFirst(max(count, 0))
            }
        }
        if let extra = remaining.first { throw fail("unexpected argument '\(extra)'") }
    }

    /// Whether `token` asks for help.
    private static func isHelp(_ token: String) -> Bool { token == "-h" || token == "--help" }

    /// Whether `token` is written as an option (not `-`, not a negative number).
    private static func looksLikeOption(_ token: String) -> Bool {
        token.hasPrefix("-") && token != "-" && Double(token) == nil
    }

    /// `; did you mean 'x'?` when one candidate is close to `word`, else nothing.
    static func suggestion(for word: String, among candidates: [String]) -> String {
        let scored = candidates.map { ($0, editDistance(word, $0)) }.filter { $0.1 <= 2 }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return "" }
        return "; did you mean '\(best.0)'?"
    }

    /// The Levenshtein distance between two short words.
    static func editDistance(_ first: String, _ second: String) -> Int {
        let a = Array(first), b = Array(second)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
