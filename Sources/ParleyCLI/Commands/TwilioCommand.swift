import Foundation
import ParleyCore
import ParleyNet
import ParleyServer

/// `parley twilio`: prints the webhook URL to paste into Twilio's console and checks the
/// phone setup: the public URL reaches the server, the auth token is set, agents' numbers.
struct TwilioCommand: ParleyCommand {
    static let spec = CommandSpec(
        name: "twilio",
        abstract: "Print the Twilio webhook URL and check the phone-call setup.",
        discussion: "Checks that PARLEY_PUBLIC_URL reaches the running server, that PARLEY_TWILIO_AUTH_TOKEN is set "
            + "(so every call's X-Twilio-Signature is verified) and which agent answers each phone number. "
            + "Exits 1 when a check fails.",
        options: [
            .option("agent", value: "id", help: "Print the webhook URL for this agent (?agent=ID) instead of choosing by number."),
            .option("public-url", value: "url", help: "The https URL Twilio reaches the server at (default $PARLEY_PUBLIC_URL)."),
            AgentsCommands.urlOption,
        ],
        environment: [
            EnvironmentSpec("PARLEY_PUBLIC_URL", "The https URL Twilio reaches the server at (a tunnel or reverse proxy)."),
            EnvironmentSpec("PARLEY_TWILIO_AUTH_TOKEN", "The Twilio account's auth token, which signs every webhook."),
        ] + AgentsCommands.environment,
        examples: ["parley twilio", "parley twilio --agent agent_123 --public-url https://voice.example.com"],
        command: TwilioCommand.self
    )

    /// The agent the printed URL names.
    var agentID: String?
    /// The public URL, when given as an option.
    var publicURL: URL?
    /// The server, when given as an option.
    var url: URL?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        agentID = try arguments.value("agent", .nonEmpty)
        publicURL = try arguments.value("public-url", .serverURL)
        url = try arguments.value("url", .serverURL)
    }

    /// One finding of the check.
    enum Finding: Equatable {
        case ok(String)
        case note(String)
        case problem(String)
    }

    /// Prints `findings`, one line each; throws when any is a problem.
    static func report(_ findings: [Finding], context: CommandContext) throws {
        let style = context.outputStyle
        for finding in findings {
            switch finding {
            case .ok(let text): context.output.line(style.bold("ok   ") + " " + text)
            case .note(let text): context.output.line(style.bold("note ") + " " + text)
            case .problem(let text): context.output.line(style.bold("FAIL ") + " " + text)
            }
        }
        let problems = findings.filter { if case .problem = $0 { true } else { false } }.count
        if problems > 0 {
            throw CommandFailure("the phone setup has \(problems) problem\(problems == 1 ? "" : "s")")
        }
    }

    func run(_ context: CommandContext) async throws {
        var findings: [Finding] = []
        let (settings, settingProblems) = ServerSettings.load(environment: context.environment)
        findings += settingProblems.filter { $0.hasPrefix("PARLEY_PUBLIC_URL") }.map(Finding.problem)
        let base = (publicURL ?? settings.telephony.publicURL).map { $0.absoluteString.trimmingSuffix("/") }
        let webhook = (base ?? "https://YOUR-PUBLIC-HOST") + "/v1/telephony/twilio/voice" + (agentID.map { "?agent=\($0.queryValueEncoded)" } ?? "")

        let style = context.outputStyle
        context.output.line("Paste this into Twilio's console (Phone Numbers → your number → Voice configuration →")
        context.output.line("\"A call comes in\": Webhook, HTTP POST):")
        context.output.line("")
        context.output.line("  " + style.bold(webhook))
        context.output.line("")

        if let base {
            findings.append(base.hasPrefix("https://")
                ? .ok("public URL \(base)")
                : .note("public URL \(base) is not https: Twilio needs https and wss, so this only suits a local test"))
            findings.append(await Self.reachability(of: base, what: "through the public URL"))
        } else {
            findings.append(.problem("PARLEY_PUBLIC_URL is not set: set it to the https URL Twilio reaches this server at (a tunnel or reverse proxy), or pass --public-url"))
        }
        findings.append(settings.telephony.twilioAuthToken == nil
            ? .problem("PARLEY_TWILIO_AUTH_TOKEN is not set: the server refuses every call until it is (the token is on the Twilio console's account page)")
            : .ok("PARLEY_TWILIO_AUTH_TOKEN is set: every call's X-Twilio-Signature is verified"))
        findings += await Self.agentFindings(url: url, agentID: agentID, context: context)

        try Self.report(findings, context: context)
    }

    /// Whether `GET /healthz` answers 200 at `base`.
    static func reachability(of base: String, what: String) async -> Finding {
        guard let url = URL(string: base + "/healthz") else { return .problem("\(base) is not a URL") }
        do {
            let response = try await HTTPClient.shared.send(HTTPClient.Request(url: url, method: "GET", headers: [:], body: nil, idleTimeout: .seconds(10)))
            return response.status == 200
                ? .ok("the server answers \(what) (GET \(url.absoluteString))")
                : .problem("GET \(url.absoluteString) answered HTTP \(response.status), not 200: is that URL this Parley server?")
        } catch {
            return .problem("GET \(url.absoluteString) failed (\(ParleyCommandLine.describe(error))): is the server running and the tunnel or proxy up?")
        }
    }

    /// Which agent answers which number, from the running server's agents (`agentID`: the one asked for).
    static func agentFindings(url: URL?, agentID: String?, context: CommandContext) async -> [Finding] {
        let agents: [JSONValue]
        do {
            let server = try ServerConnection.resolve(url, context: context)
            guard case .array(let list)? = try await server.send("GET", "/v1/agents")["data"] else {
                return [.problem("the server's agent list has no 'data' array")]
            }
            agents = list
        } catch {
            return [.problem("cannot read the agents: \(ParleyCommandLine.describe(error))")]
        }
        var findings: [Finding] = []
        if let agentID, !agents.contains(where: { $0["id"]?.stringValue == agentID }) {
            findings.append(.problem("there is no agent \(agentID) (see 'parley agents list')"))
        }
        var owners: [String: [String]] = [:]
        for agent in agents {
            guard case .array(let numbers)? = agent["telephony"]?["phone_numbers"] else { continue }
            let label = (agent["id"]?.stringValue ?? "?") + (agent["name"]?.stringValue.map { " (\($0))" } ?? "")
            for number in numbers.compactMap(\.stringValue) { owners[number, default: []].append(label) }
        }
        for (number, labels) in owners.sorted(by: { $0.key < $1.key }) {
            findings.append(labels.count == 1
                ? .ok("calls to \(number) reach \(labels[0])")
                : .problem("\(number) is set on \(labels.count) agents (\(labels.joined(separator: ", "))); keep it on one"))
        }
        if owners.isEmpty, agentID == nil {
            findings.append(.note("no agent has telephony.phone_numbers: calls reach the server's default agent (or use --agent)"))
        }
        return findings
    }
}

private extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        var text = self
        while text.hasSuffix(suffix) { text.removeLast(suffix.count) }
        return text
    }

    var queryValueEncoded: String {
        addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? self
    }
}
