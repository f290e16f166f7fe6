import Foundation

/// The values of one parsed command line, looked up by option long name or argument name.
struct ParsedArguments: Sendable {
    /// The command the values belong to (names after `parley`).
    let commandPath: [String]
    /// Option values by long name; a flag that was given maps to an empty array.
    private(set) var optionValues: [String: [String]] = [:]
    /// Positional values by argument name.
    private(set) var argumentValues: [String: [String]] = [:]

    /// Creates an empty set of values for the command at `commandPath`.
    init(commandPath: [String]) {
        self.commandPath = commandPath
    }

    /// Records an option's value (or a flag, with `nil`).
    mutating func record(option long: String, value: String?) {
        optionValues[long, default: []].append(contentsOf: value.map { [$0] } ?? [])
    }

    /// Records the values of a positional argument.
    mutating func record(argument name: String, values: [String]) {
        argumentValues[name] = values
    }

    /// Whether the option or flag `long` was given.
    func contains(_ long: String) -> Bool { optionValues[long] != nil }

    /// Whether the flag `long` was given.
    func flag(_ long: String) -> Bool { contains(long) }

    /// The value of option `long`, if given.
    func string(_ long: String) -> String? { optionValues[long]?.last }

    /// The value of positional argument `name`, if given.
    func argument(_ name: String) -> String? { argumentValues[name]?.first }

    /// All values of positional argument `name` (variadic arguments).
    func arguments(_ name: String) -> [String] { argumentValues[name] ?? [] }

    /// The value of option `long` converted by `parser`, or `nil` when the option was not given.
    /// - Throws: `UsageError` naming the option and why its value is not acceptable.
    func value<Value>(_ long: String, _ parser: ValueParser<Value>) throws(UsageError) -> Value? {
        guard let text = string(long) else { return nil }
        switch parser.parse(text) {
        case .success(let value): return value
        case .failure(let problem): throw usageError("invalid value '\(text)' for --\(long): \(problem.reason)")
        }
    }

    /// A usage error about this command.
    func usageError(_ message: String) -> UsageError {
        UsageError(message, commandPath: commandPath)
    }
}
