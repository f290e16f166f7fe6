import Foundation
import ParleyCore

/// `parley agents …`: manage the agents of a running server over its REST API.
enum AgentsCommands {
    /// The `agents` group.
    static let spec = CommandSpec(
        name: "agents",
        abstract: "Manage the agents of a running server.",
        discussion: "Talks to the server's REST API with the server secret from PARLEY_SERVER_SECRET "
            + "(else the secret 'parley serve' generated in ./.parley).",
        subcommands: [AgentsList.spec, AgentsShow.spec, AgentsCreate.spec, AgentsUpdate.spec, AgentsDelete.spec]
    )

    /// The `--url` option every agents command takes.
    static let urlOption = OptionSpec.option("url", value: "url", help: "The server (default $PARLEY_URL, else http://127.0.0.1:8080).")

    /// The environment every agents command reads.
    static let environment = [
        EnvironmentSpec("PARLEY_SERVER_SECRET", "The server secret (else the secret in ./.parley)."),
        EnvironmentSpec("PARLEY_URL", "The server when --url is not given."),
    ]

    /// The options that set an agent's fields, for `create` and `update`.
    static let fieldOptions: [OptionSpec] = [
        .option("name", value: "name", help: "The agent's name."),
        .option("instructions", value: "text", help: "The agent's instructions (its system prompt)."),
        .option("voice", value: "name", help: "The voice the agent speaks with."),
        .option("tools", value: "names", help: "Built-in tools it may use, comma-separated: calculate, get_current_time."),
        .flag("manual-turns", help: "Push-to-talk: turns end when the client commits, not on silence."),
    ]

    /// The built-in tools a server offers agents.
    static let builtinTools = ["calculate", "get_current_time"]

    /// An agent's fields from a JSON file (or `-` for standard input) and the field options, the
    /// options winning.
    struct Fields: Sendable {
        /// The JSON file, if given.
        var file: String?
        /// Fields set by options.
        var overrides: [String: JSONValue]

        /// Reads the options of `arguments`.
        init(_ arguments: ParsedArguments) throws(UsageError) {
            file = arguments.argument("file")
            overrides = [:]
            if let name = try arguments.value("name", .nonEmpty) { overrides["name"] = .string(name) }
            if let instructions = try arguments.value("instructions", .nonEmpty) { overrides["instructions"] = .string(instructions) }
            if let voice = try arguments.value("voice", .nonEmpty) { overrides["voice"] = .string(voice) }
            if let list = arguments.string("tools") {
                let names = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                if let unknown = names.first(where: { !AgentsCommands.builtinTools.contains($0) }) {
                    throw arguments.usageError(
                        "invalid value '\(list)' for --tools: unknown tool '\(unknown)' (\(AgentsCommands.builtinTools.joined(separator: ", ")))"
                    )
                }
                overrides["tools"] = .array(names.map { .object(["type": "builtin", "name": .string($0)]) })
            }
            if arguments.flag("manual-turns") { overrides["manual_turns"] = true }
            if file == nil, overrides.isEmpty {
                throw arguments.usageError("give a JSON file or at least one of --name, --instructions, --voice, --tools, --manual-turns")
            }
        }

        /// The JSON object to send.
        /// - Throws: `CommandFailure` when the file cannot be read or is not a JSON object.
        func document(_ context: CommandContext) async throws -> JSONValue {
            var members: [String: JSONValue] = [:]
            if let file {
                let name = file == "-" ? "standard input" : file
                let data: Data
                do {
                    data = file == "-" ? try await context.input.readAll(1 << 20) : try Data(contentsOf: context.fileURL(file))
                } catch let failure as CommandFailure {
                    throw failure
                } catch {
                    throw CommandFailure("cannot read \(name): \(FileErrorText.describe(error))")
                }
                guard case .object(let object)? = try? JSONValue(parsing: String(decoding: data, as: UTF8.self)) else {
                    throw CommandFailure("\(name) does not hold a JSON object")
                }
                members = object
            }
            members.merge(overrides) { _, option in option }
            return .object(members)
        }
    }
}

/// `parley agents list`.
struct AgentsList: ParleyCommand {
    static let spec = CommandSpec(
        name: "list",
        abstract: "List the server's agents.",
        options: [AgentsCommands.urlOption, .flag("json", help: "Print the server's JSON answer.")],
        environment: AgentsCommands.environment,
        examples: ["parley agents list", "parley agents list --url https://voice.example.com --json"],
        command: AgentsList.self
    )

    /// The server.
    var url: URL?
    /// Whether to print JSON.
    var printsJSON: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        url = try arguments.value("url", .serverURL)
        printsJSON = arguments.flag("json")
    }

    func run(_ context: CommandContext) async throws {
        let server = try ServerConnection.resolve(url, context: context)
        let answer = try await server.send("GET", "/v1/agents")
        if printsJSON {
            context.output.line(answer.prettyText)
            return
        }
        guard case .array(let agents)? = answer["data"] else {
            throw CommandFailure("the server's agent list has no 'data' array")
        }
        guard !agents.isEmpty else {
            context.errorOutput.line("No agents yet. Create one with 'parley agents create --name NAME'.")
            return
        }
        let rows = agents.map { agent in
            [agent["id"]?.stringValue ?? "?", agent["name"]?.stringValue ?? "", agent["voice"]?.stringValue ?? ""]
        }
        let style = context.outputStyle
        context.output.write(TextTable(header: ["ID", "NAME", "VOICE"], rows: rows).render(headerStyle: style.bold))
    }
}

/// `parley agents show`.
struct AgentsShow: ParleyCommand {
    static let spec = CommandSpec(
        name: "show",
        abstract: "Print one agent as JSON.",
        arguments: [ArgumentSpec(name: "id", arity: .required, help: "The agent's id.")],
        options: [AgentsCommands.urlOption],
        environment: AgentsCommands.environment,
        command: AgentsShow.self
    )

    /// The agent.
    var id: String
    /// The server.
    var url: URL?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        id = arguments.argument("id") ?? ""
        url = try arguments.value("url", .serverURL)
    }

    func run(_ context: CommandContext) async throws {
        let server = try ServerConnection.resolve(url, context: context)
        context.output.line(try await server.send("GET", "/v1/agents/\(id.pathComponentEncoded)").prettyText)
    }
}

/// `parley agents create`.
struct AgentsCreate: ParleyCommand {
    static let spec = CommandSpec(
        name: "create",
        abstract: "Create an agent from a JSON file and/or options; prints the new agent as JSON.",
        arguments: [ArgumentSpec(name: "file", arity: .optional, help: "A JSON file with the agent's fields ('-' reads standard input).")],
        options: AgentsCommands.fieldOptions + [AgentsCommands.urlOption],
        environment: AgentsCommands.environment,
        examples: [
            "parley agents create --name Helper --instructions \"Be brief.\" --tools calculate",
            "parley agents create agent.json --voice slt",
        ],
        command: AgentsCreate.self
    )

    /// The agent's fields.
    var fields: AgentsCommands.Fields
    /// The server.
    var url: URL?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        fields = try AgentsCommands.Fields(arguments)
        url = try arguments.value("url", .serverURL)
    }

    func run(_ context: CommandContext) async throws {
        let server = try ServerConnection.resolve(url, context: context)
        let document = try await fields.document(context)
        context.output.line(try await server.send("POST", "/v1/agents", body: document).prettyText)
    }
}

/// `parley agents update`.
struct AgentsUpdate: ParleyCommand {
    static let spec = CommandSpec(
        name: "update",
        abstract: "Change an agent's fields from a JSON file and/or options; prints the agent as JSON.",
        arguments: [
            ArgumentSpec(name: "id", arity: .required, help: "The agent's id."),
            ArgumentSpec(name: "file", arity: .optional, help: "A JSON file with the fields to change ('-' reads standard input)."),
        ],
        options: AgentsCommands.fieldOptions + [AgentsCommands.urlOption],
        environment: AgentsCommands.environment,
        examples: ["parley agents update agent_123 --instructions \"Answer in French.\""],
        command: AgentsUpdate.self
    )

    /// The agent.
    var id: String
    /// The fields to change.
    var fields: AgentsCommands.Fields
    /// The server.
    var url: URL?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        id = arguments.argument("id") ?? ""
        fields = try AgentsCommands.Fields(arguments)
        url = try arguments.value("url", .serverURL)
    }

    func run(_ context: CommandContext) async throws {
        let server = try ServerConnection.resolve(url, context: context)
        let document = try await fields.document(context)
        context.output.line(try await server.send("PATCH", "/v1/agents/\(id.pathComponentEncoded)", body: document).prettyText)
    }
}

/// `parley agents delete`.
struct AgentsDelete: ParleyCommand {
    static let spec = CommandSpec(
        name: "delete",
        abstract: "Delete an agent.",
        arguments: [ArgumentSpec(name: "id", arity: .required, help: "The agent's id.")],
        options: [AgentsCommands.urlOption],
        environment: AgentsCommands.environment,
        command: AgentsDelete.self
    )

    /// The agent.
    var id: String
    /// The server.
    var url: URL?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        id = arguments.argument("id") ?? ""
        url = try arguments.value("url", .serverURL)
    }

    func run(_ context: CommandContext) async throws {
        let server = try ServerConnection.resolve(url, context: context)
        _ = try await server.send("DELETE", "/v1/agents/\(id.pathComponentEncoded)")
        context.output.line("Deleted \(id).")
    }
}

extension JSONValue {
    /// Indented JSON text with sorted keys, for people to read.
    var prettyText: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? String(decoding: encoder.encode(self), as: UTF8.self)) ?? jsonText
    }
}

extension String {
    /// The string escaped for use as one path segment of a URL.
    var pathComponentEncoded: String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#")
        return addingPercentEncoding(withAllowedCharacters: allowed) ?? self
    }
}
