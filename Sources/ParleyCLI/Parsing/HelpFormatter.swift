import Foundation

/// Writes a command's help text and usage line from its `CommandSpec`.
struct HelpFormatter {
    /// The name of the tool, first word of every usage line.
    let toolName: String
    /// The column help text wraps at.
    let width = 80

    /// The usage line of the command at `path` (without a `Usage:` prefix).
    func usage(_ spec: CommandSpec, path: [String]) -> String {
        usageUnits(spec, path: path).joined(separator: " ")
    }

    /// The pieces of a usage line that must stay on one line: the command, then each argument and option.
    private func usageUnits(_ spec: CommandSpec, path: [String]) -> [String] {
        let command = ([toolName] + path).joined(separator: " ")
        guard spec.subcommands.isEmpty else { return [command, "<command>"] }
        return [command] + spec.arguments.map(\.usage)
            + spec.options.filter(\.isRequired).map(\.displayName)
            + spec.options.filter { !$0.isRequired }.map { "[\($0.displayName)]" }
    }

    /// The full help of the command at `path`.
    func help(_ spec: CommandSpec, path: [String]) -> String {
        var sections: [String] = [wrap(spec.abstract, indent: 0)]
        if let discussion = spec.discussion {
            sections.append(discussion.components(separatedBy: "\n\n").map { wrap($0, indent: 0) }.joined(separator: "\n\n"))
        }
        sections.append(wrap(["Usage:"] + usageUnits(spec, path: path), indent: 0, hangingIndent: 7))

        let helpRow = ("-h, --help", "Show this help.")
        var tables: [(title: String, rows: [(String, String)])] = []
        if !spec.subcommands.isEmpty {
            tables.append(("Commands", spec.subcommands.map { ($0.name, $0.abstract) }))
        }
        if !spec.arguments.isEmpty {
            tables.append(("Arguments", spec.arguments.map { ("<\($0.name)>", $0.help) }))
        }
        var optionRows = spec.options.map { option in
            (option.short.map { "-\($0), \(option.displayName)" } ?? "    \(option.displayName)", option.help)
        }
        optionRows.append(helpRow)
        if path.isEmpty { optionRows.append(("    --version", "Show the version.")) }
        tables.append(("Options", optionRows))
        if !spec.environment.isEmpty {
            tables.append(("Environment", spec.environment.map { ($0.name, $0.help) }))
        }

        let column = min(tables.flatMap(\.rows).map(\.0.count).max().map { $0 + 4 } ?? 0, 32)
        for table in tables {
            let rows = table.rows.map { row(left: $0.0, right: $0.1, column: column) }
            sections.append("\(table.title):\n" + rows.joined(separator: "\n"))
        }
        if !spec.examples.isEmpty {
            sections.append("Examples:\n" + spec.examples.map { "  \($0)" }.joined(separator: "\n"))
        }
        if !spec.subcommands.isEmpty {
            let helpWord = path.isEmpty ? "help <command>" : "help \(path.joined(separator: " ")) <command>"
            sections.append("See '\(toolName) \(helpWord)' for a command's options.")
        }
        return sections.joined(separator: "\n\n") + "\n"
    }

    /// One line of a two-column table: `left` indented by two, `right` wrapped at `column`.
    private func row(left: String, right: String, column: Int) -> String {
        let label = "  " + left
        let text = wrap(right, indent: column)
        if label.count + 2 <= column {
            return label + String(repeating: " ", count: column - label.count) + text.dropFirst(column)
        }
        return label + "\n" + text
    }

    /// Wraps the words of `text` at `width`, every line indented by `indent` spaces.
    private func wrap(_ text: String, indent: Int) -> String {
        wrap(text.split(whereSeparator: \.isWhitespace).map(String.init), indent: indent)
    }

    /// Wraps `units` (kept whole) at `width`, every line indented by `indent` spaces and lines
    /// after the first by `hangingIndent` more.
    private func wrap(_ units: [String], indent: Int, hangingIndent: Int = 0) -> String {
        var lines: [String] = []
        var line = ""
        var padding = String(repeating: " ", count: indent)
        for unit in units {
            if !line.isEmpty, padding.count + line.count + 1 + unit.count > width {
                lines.append(padding + line)
                line = ""
                padding = String(repeating: " ", count: indent + hangingIndent)
            }
            line += line.isEmpty ? unit : " " + unit
        }
        lines.append(padding + line)
        return lines.joined(separator: "\n")
    }
}
