import Foundation
import ParleyServer

/// Finds the server secret the way `parley serve` does: `PARLEY_SERVER_SECRET`, else the
/// secret `serve` generated into its data directory.
enum ServerSecretSource {
    /// The shortest secret the server accepts.
    static let minimumLength = 16

    /// `--data-dir` of the commands that sign tokens with the secret.
    static let dataDirectoryOption = OptionSpec.option(
        "data-dir", value: "path", help: "Where 'parley serve' keeps its generated secret (default ./.parley)."
    )

    /// The environment the commands that sign tokens with the secret read.
    static let signingEnvironment = [
        EnvironmentSpec("PARLEY_SERVER_SECRET", "The server secret that signs the token."),
        EnvironmentSpec("PARLEY_DATA_DIR", "The data directory when --data-dir is not given."),
    ]

    /// The secret, from the environment or from `dataDirectory` (default `PARLEY_DATA_DIR`, else `./.parley`).
    /// - Throws: `CommandFailure` saying where a secret was looked for and how to provide one.
    static func secret(_ context: CommandContext, dataDirectory: String? = nil) throws -> String {
        if let secret = context.environmentValue("PARLEY_SERVER_SECRET") {
            guard secret.utf8.count >= minimumLength else {
                throw CommandFailure("PARLEY_SERVER_SECRET must be at least \(minimumLength) characters")
            }
            return secret
        }
        let directory = dataDirectory ?? context.environmentValue("PARLEY_DATA_DIR") ?? ".parley"
        let file = context.fileURL(directory).appendingPathComponent(ServerSecretFile.fileName)
        guard let contents = try? String(contentsOf: file, encoding: .utf8) else {
            throw CommandFailure(
                "no server secret: set PARLEY_SERVER_SECRET, or run 'parley serve' once to create \(directory)/\(ServerSecretFile.fileName)"
            )
        }
        let secret = contents.trimmingCharacters(in: .whitespacesAndNewlines)
        guard secret.utf8.count >= minimumLength else {
            throw CommandFailure("\(file.path) does not hold a server secret of at least \(minimumLength) characters")
        }
        return secret
    }
}
