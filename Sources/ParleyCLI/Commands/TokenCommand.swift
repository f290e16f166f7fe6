import Foundation
import ParleyServer

/// `parley token`: mints a client token locally with the server secret.
struct TokenCommand: ParleyCommand {
    static let spec = CommandSpec(
        name: "token",
        abstract: "Mint a client token from the server secret.",
        discussion: "The token is an HS256 JWT that lets one user open realtime sessions without the server secret. "
            + "It is signed locally, so no server needs to be running.",
        options: [
            .option("user", value: "id", required: true, help: "The user the token is for (its subject)."),
            .option("agent", value: "id", help: "Limit the token to this agent."),
            .option("ttl", value: "duration", help: "How long the token lives, e.g. 90s, 10m, 2h (default 10m, at most 24h)."),
            ServerSecretSource.dataDirectoryOption,
            .flag("json", help: "Print the token, its expiry and scope as JSON."),
        ],
        environment: ServerSecretSource.signingEnvironment,
        examples: ["parley token --user alice", "parley token --user alice --agent agent_123 --ttl 2h --json"],
        command: TokenCommand.self
    )

    /// The user the token is minted for.
    var user: String
    /// The agent the token is limited to.
    var agentID: String?
    /// How long the token lives.
    var lifetime: Duration
    /// Where a generated secret is looked for.
    var dataDirectory: String?
    /// Whether to print JSON.
    var printsJSON: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        user = try arguments.value("user", .nonEmpty) ?? ""
        guard user.count <= 200 else { throw arguments.usageError("--user must be at most 200 characters") }
        agentID = try arguments.value("agent", .nonEmpty)
        lifetime = try arguments.value("ttl", .duration(maximum: .seconds(ClientTokenAuthority.maximumLifetime)))
            ?? .seconds(ClientTokenAuthority.defaultLifetime)
        dataDirectory = arguments.string("data-dir")
        printsJSON = arguments.flag("json")
    }

    func run(_ context: CommandContext) async throws {
        let secret = try ServerSecretSource.secret(context, dataDirectory: dataDirectory)
        let minted = ClientTokenAuthority(secret: secret).mint(subject: user, agentID: agentID, lifetime: lifetime.timeInterval)
        guard printsJSON else {
            context.output.line(minted.token)
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = try encoder.encode(MintedToken(
            token: minted.token, expiresAt: minted.claims.expiresAt, user: user, agentID: agentID
        ))
        context.output.line(String(decoding: json, as: UTF8.self))
    }

    /// The JSON `--json` prints, shaped like the server's `POST /v1/tokens` answer.
    private struct MintedToken: Encodable {
        var token: String
        var expiresAt: Int
        var user: String
        var agentID: String?

        enum CodingKeys: String, CodingKey {
            case token, expiresAt = "expires_at", user, agentID = "agent_id"
        }
    }
}
