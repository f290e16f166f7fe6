import Foundation
import ParleyServer
import Testing

/// The built executable, run as a real process: exit codes and the split of stdout and stderr.
@Suite("parley as a process")
struct ProcessTests {
    @Test("--version on stdout, exit 0")
    func version() async throws {
        let result = try await ParleyProcess.run(["--version"])
        #expect(result.status == 0)
        #expect(result.output.hasPrefix("parley "))
        #expect(result.errorOutput.isEmpty)
    }

    @Test("a usage error exits 64 with the message and usage line on stderr")
    func usageError() async throws {
        let result = try await ParleyProcess.run(["token"])
        #expect(result.status == 64)
        #expect(result.output.isEmpty)
        #expect(result.errorOutput == "error: missing option --user <id>\nUsage: parley token --user <id> [--agent <id>] [--ttl <duration>] [--data-dir <path>] [--json]\n")
    }

    @Test("a runtime failure exits 1 with one line on stderr; a pipe gets no colour")
    func runtimeFailure() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try await ParleyProcess.run(["token", "--user", "alice"], directory: directory.url)
        #expect(result.status == 1)
        #expect(result.output.isEmpty)
        #expect(result.errorOutput == "error: no server secret: set PARLEY_SERVER_SECRET, or run 'parley serve' once to create .parley/server-secret\n")
    }

    @Test("token: the token alone on stdout")
    func token() async throws {
        let secret = "process-test-secret-0123456789"
        let result = try await ParleyProcess.run(["token", "--user", "erin", "--ttl", "90s"], environment: ["PARLEY_SERVER_SECRET": secret])
        #expect(result.status == 0)
        let claims = try ClientTokenAuthority(secret: secret).verify(result.output.trimmingCharacters(in: .newlines))
        #expect(claims.subject == "erin")
        #expect(claims.expiresAt - claims.issuedAt == 90)
    }
}
