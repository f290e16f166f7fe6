import Foundation
import ParleyServer

/// `parley console-token`: mints a token for the operator console locally with the server secret.
struct ConsoleTokenCommand: ParleyCommand {
    static let spec = CommandSpec(
        name: "console-token",
        abstract: "Mint a token for the operator console (/console).",
        discussion: "The token opens the console and its API (/v1/console/...) and nothing else, so the server secret "
            + "need not be pasted into a browser. It is signed locally, so no server needs to be running.",
        options: [
            .option("ttl", value: "duration", help: "How long the token lives, e.g. 30m, 12h (default 12h, at most 7 days)."),
            ServerSecretSource.dataDirectoryOption,
            .flag("json", help: "Print the token and its expiry as JSON."),
        ],
        environment: ServerSecretSource.signingEnvironment,
        examples: ["parley console-token", "parley console-token --ttl 30m --json"],
        command: ConsoleTokenCommand.self
    )

    /// How long the token lives.
    var lifetime: Duration
    /// Where a generated secret is looked for.
    var dataDirectory: String?
    /// Whether to print JSON.
    var printsJSON: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        lifetime = try arguments.value("ttl", .duration(maximum: .seconds(ConsoleToken.maximumLifetime)))
            ?? .seconds(ConsoleToken.defaultLifetime)
        dataDirectory = arguments.string("data-dir")
        printsJSON = arguments.flag("json")
    }

    func run(_ context: CommandContext) async throws {
        let secret = try ServerSecretSource.secret(context, dataDirectory: dataDirectory)
        let minted = ConsoleToken.mint(secret: secret, lifetime: lifetime.timeInterval)
        guard printsJSON else {
            context.output.line(minted.token)
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = try encoder.encode(MintedConsoleToken(token: minted.token, expiresAt: minted.expiresAt))
        context.output.line(String(decoding: json, as: UTF8.self))
    }

    /// The JSON `--json` prints.
    private struct MintedConsoleToken: Encodable {
        var token: String
        var expiresAt: Int

        enum CodingKeys: String, CodingKey {
            case token, expiresAt = "expires_at"
        }
    }
}
