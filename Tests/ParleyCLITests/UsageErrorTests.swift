import Foundation
import Testing
@testable import ParleyCLI

/// Every usage error: exit 64, nothing on standard output, and on standard error one line saying
/// what is wrong followed by the command's usage line.
@Suite("Usage errors")
struct UsageErrorTests {
    static let usage = [
        "": "parley <command>",
        "serve": "parley serve [--host <address>] [--port <port>] [--data-dir <path>] [--env-file <path>] [--web-root <path>] [--llm-model <path>] [--asr-model <name>] [--database-url <url>] [--tls-cert <path>] [--tls-key <path>]",
        "chat": "parley chat [--url <url>] [--agent <id>] [--instructions <text>]",
        "talk": "parley talk <file> [--out <file>] [--url <url>] [--agent <id>]",
        "transcribe": "parley transcribe <file>... [--json] [--language <code>] [--prompt <text>]",
        "say": "parley say [<text>...] --output <file> [--voice <name>] [--speed <rate>]",
        "token": "parley token --user <id> [--agent <id>] [--ttl <duration>] [--data-dir <path>] [--json]",
        "agents": "parley agents <command>",
        "agents list": "parley agents list [--url <url>] [--json]",
        "agents show": "parley agents show <id> [--url <url>]",
        "agents create": "parley agents create [<file>] [--name <name>] [--instructions <text>] [--voice <name>] [--tools <names>] [--manual-turns] [--url <url>]",
        "agents update": "parley agents update <id> [<file>] [--name <name>] [--instructions <text>] [--voice <name>] [--tools <names>] [--manual-turns] [--url <url>]",
        "agents delete": "parley agents delete <id> [--url <url>]",
        "eval": "parley eval <scenario>... [--url <url>] [--agent <id>] [--repeat <count>] [--min-pass-rate <n>] [--junit <file>] [--json <file>] [--judge-model <name>]",
        "help": "parley help [<command>...]",
    ]

    static let cases: [(arguments: [String], message: String, command: String)] = [
        ([], "missing command (serve, chat, talk, transcribe, say, eval, token, console-token, agents, twilio, sip, help)", ""),
        (["bogus"], "unknown command 'bogus'", ""),
        (["sya"], "unknown command 'sya'; did you mean 'say'?", ""),
        (["--bogus"], "unknown option '--bogus'", ""),
        (["help", "nope"], "unknown command 'nope'", "help"),
        (["help", "say", "more"], "'say' has no subcommand 'more'", "help"),

        (["serve", "--port", "70000"], "invalid value '70000' for --port: expected a whole number from 0 to 65535", "serve"),
        (["serve", "--port", "http"], "invalid value 'http' for --port: expected a whole number from 0 to 65535", "serve"),
        (["serve", "--host"], "missing value for --host <address>", "serve"),
        (["serve", "--host", " "], "invalid value ' ' for --host: expected a non-empty value", "serve"),
        (["serve", "now"], "unexpected argument 'now'", "serve"),
        (["serve", "--prot", "80"], "unknown option '--prot'; did you mean '--port'?", "serve"),
        (["serve", "--asr-model", "large-v3"], "invalid value 'large-v3' for --asr-model: expected tiny.en or base", "serve"),

        (["chat", "--agent", "agent_1"], "--agent needs --url: agents live on a server", "chat"),
        (["chat", "--url", "ftp://example.com"], "invalid value 'ftp://example.com' for --url: expected an http:// or https:// URL such as http://127.0.0.1:8080", "chat"),
        (["chat", "--url", "http://127.0.0.1:8080", "--instructions", "Be brief."], "--instructions is for in-process chats; a server's agent has its own", "chat"),
        (["chat", "hello"], "unexpected argument 'hello'", "chat"),

        (["talk"], "missing argument <file>", "talk"),
        (["talk", "a.wav", "b.wav"], "unexpected argument 'b.wav'", "talk"),
        (["talk", "a.wav", "--agent", "agent_1"], "--agent needs --url: agents live on a server", "talk"),
        (["talk", "a.wav", "--url", "localhost:8080"], "invalid value 'localhost:8080' for --url: expected an http:// or https:// URL such as http://127.0.0.1:8080", "talk"),
        (["talk", "a.wav", "--out"], "missing value for --out <file>", "talk"),

        (["transcribe"], "missing argument <file>", "transcribe"),
        (["transcribe", "a.wav", "--json=yes"], "--json takes no value", "transcribe"),
        (["transcribe", "a.wav", "--jsn"], "unknown option '--jsn'; did you mean '--json'?", "transcribe"),

        (["say", "Hello"], "missing option --output <file>", "say"),
        (["say", "Hello", "-o"], "missing value for -o <file>", "say"),
        (["say", "Hello", "-o", "a.wav", "--speed", "0"], "invalid value '0' for --speed: expected a number from 0.25 to 4", "say"),
        (["say", "Hello", "-o", "a.wav", "--speed", "fast"], "invalid value 'fast' for --speed: expected a number from 0.25 to 4", "say"),
        (["say", "Hello", "-o", "a.wav", "--output", "b.wav"], "--output <file> was given more than once", "say"),

        (["eval"], "missing argument <scenario>", "eval"),
        (["eval", "a.json", "--repeat", "0"], "invalid value '0' for --repeat: expected a whole number from 1 to 1000", "eval"),
        (["eval", "a.json", "--min-pass-rate", "120"], "invalid value '120' for --min-pass-rate: expected a number from 0 to 100", "eval"),
        (["eval", "a.json", "--agent", "agent_1"], "--agent needs --url: agents live on a server", "eval"),
        (["eval", "a.json", "--url", "localhost"], "invalid value 'localhost' for --url: expected an http:// or https:// URL such as http://127.0.0.1:8080", "eval"),

        (["token"], "missing option --user <id>", "token"),
        (["token", "--user", ""], "invalid value '' for --user: expected a non-empty value", "token"),
        (["token", "--user", String(repeating: "u", count: 201)], "--user must be at most 200 characters", "token"),
        (["token", "--user", "alice", "--ttl", "48h"], "invalid value '48h' for --ttl: the longest allowed is 24h", "token"),
        (["token", "--user", "alice", "--ttl", "10"], "invalid value '10' for --ttl: expected a duration such as 90s, 10m or 2h", "token"),
        (["token", "--user", "alice", "--ttl", "0s"], "invalid value '0s' for --ttl: expected a duration such as 90s, 10m or 2h", "token"),

        (["agents"], "missing command (list, show, create, update, delete)", "agents"),
        (["agents", "remove", "agent_1"], "unknown command 'remove'", "agents"),
        (["agents", "lst"], "unknown command 'lst'; did you mean 'list'?", "agents"),
        (["agents", "--url", "http://x"], "unknown option '--url'", "agents"),
        (["agents", "list", "--url", "x"], "invalid value 'x' for --url: expected an http:// or https:// URL such as http://127.0.0.1:8080", "agents list"),
        (["agents", "show"], "missing argument <id>", "agents show"),
        (["agents", "create"], "give a JSON file or at least one of --name, --instructions, --voice, --tools, --manual-turns", "agents create"),
        (["agents", "create", "--tools", "calculate,weather"], "invalid value 'calculate,weather' for --tools: unknown tool 'weather' (calculate, get_current_time)", "agents create"),
        (["agents", "create", "a.json", "b.json"], "unexpected argument 'b.json'", "agents create"),
        (["agents", "update"], "missing argument <id>", "agents update"),
        (["agents", "update", "agent_1"], "give a JSON file or at least one of --name, --instructions, --voice, --tools, --manual-turns", "agents update"),
        (["agents", "delete", "agent_1", "agent_2"], "unexpected argument 'agent_2'", "agents delete"),
    ]

    @Test("exit 64 with one line and the usage line", arguments: UsageErrorTests.cases.indices)
    func usageError(index: Int) async {
        let (arguments, message, command) = Self.cases[index]
        let run = await CommandRun.run(arguments)
        #expect(run.status == 64, "\(arguments)")
        #expect(run.output.isEmpty, "\(arguments)")
        #expect(run.errorOutput == "error: \(message)\nUsage: \(Self.usage[command] ?? "?")\n", "\(arguments)")
    }

    @Test("'error:' is red on a terminal, plain with NO_COLOR or TERM=dumb")
    func colour() async {
        let coloured = await CommandRun.run(["bogus"], terminal: true)
        #expect(coloured.errorOutput.hasPrefix("\u{1B}[1;31merror:\u{1B}[0m unknown command 'bogus'\n"))
        for environment in [["NO_COLOR": "1"], ["TERM": "dumb"]] {
            let plain = await CommandRun.run(["bogus"], environment: environment, terminal: true)
            #expect(plain.errorOutput.hasPrefix("error: unknown command 'bogus'\n"), "\(environment)")
        }
        let empty = await CommandRun.run(["bogus"], environment: ["NO_COLOR": ""], terminal: true)
        #expect(empty.errorOutput.hasPrefix("\u{1B}[1;31merror:"), "an empty NO_COLOR does not count")
    }
}
