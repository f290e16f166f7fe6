import Foundation
import ParleyServer
import Testing
@testable import ParleyCLI

@Suite("parley token")
struct TokenCommandTests {
    static let secret = "test-secret-0123456789abcdef"

    @Test("mints a token the secret verifies, with subject, agent and lifetime")
    func mintsVerifiableToken() async throws {
        let before = Int(Date().timeIntervalSince1970)
        let run = await CommandRun.run(
            ["token", "--user", "alice", "--agent", "agent_42", "--ttl", "2h"],
            environment: ["PARLEY_SERVER_SECRET": Self.secret]
        )
        #expect(run.status == 0)
        #expect(run.errorOutput.isEmpty)
        #expect(run.output.hasSuffix("\n") && run.output.filter { $0 == "\n" }.count == 1)
        let claims = try ClientTokenAuthority(secret: Self.secret).verify(run.output.trimmingCharacters(in: .newlines))
        #expect(claims.subject == "alice")
        #expect(claims.agentID == "agent_42")
        #expect(claims.expiresAt - claims.issuedAt == 7200)
        #expect(claims.issuedAt >= before)
        #expect(throws: ClientTokenError.badSignature) {
            try ClientTokenAuthority(secret: "another-secret-0123456789").verify(run.output.trimmingCharacters(in: .newlines))
        }
    }

    @Test("--json prints the token with its expiry and scope; the default lifetime is 10 minutes")
    func json() async throws {
        let run = await CommandRun.run(["token", "--user", "bob", "--json"], environment: ["PARLEY_SERVER_SECRET": Self.secret])
        #expect(run.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["token", "expires_at", "user"])
        #expect(object["user"] as? String == "bob")
        let token = try #require(object["token"] as? String)
        let claims = try ClientTokenAuthority(secret: Self.secret).verify(token)
        #expect((object["expires_at"] as? Int) == claims.expiresAt)
        #expect(claims.expiresAt - claims.issuedAt == 600)
        #expect(claims.agentID == nil)
    }

    @Test("reads the secret 'parley serve' generated in the data directory")
    func secretFromDataDirectory() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let dataDirectory = directory.url.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        try "psk_generated-secret-value-1234\n".write(to: dataDirectory.appendingPathComponent("server-secret"), atomically: true, encoding: .utf8)
        let authority = ClientTokenAuthority(secret: "psk_generated-secret-value-1234")

        for (arguments, environment) in [
            (["token", "--user", "carol", "--data-dir", "data"], [String: String]()),
            (["token", "--user", "carol"], ["PARLEY_DATA_DIR": dataDirectory.path]),
        ] {
            let run = await CommandRun.run(arguments, environment: environment, directory: directory.url)
            #expect(run.status == 0, "\(run.errorOutput)")
            #expect(try authority.verify(run.output.trimmingCharacters(in: .newlines)).subject == "carol")
        }
        let defaultDirectory = directory.url.appendingPathComponent(".parley")
        try FileManager.default.moveItem(at: dataDirectory, to: defaultDirectory)
        let run = await CommandRun.run(["token", "--user", "dave"], directory: directory.url)
        #expect(try authority.verify(run.output.trimmingCharacters(in: .newlines)).subject == "dave")
    }

    @Test("without a usable secret: exit 1 and one line saying how to provide one")
    func missingSecret() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let none = await CommandRun.run(["token", "--user", "alice"], directory: directory.url)
        #expect(none.status == 1)
        #expect(none.output.isEmpty)
        #expect(none.errorOutput == "error: no server secret: set PARLEY_SERVER_SECRET, or run 'parley serve' once to create .parley/server-secret\n")

        let short = await CommandRun.run(["token", "--user", "alice"], environment: ["PARLEY_SERVER_SECRET": "short"])
        #expect(short.status == 1)
        #expect(short.errorOutput == "error: PARLEY_SERVER_SECRET must be at least 16 characters\n")

        try FileManager.default.createDirectory(at: directory.url.appendingPathComponent(".parley"), withIntermediateDirectories: true)
        try "tiny".write(to: directory.url.appendingPathComponent(".parley/server-secret"), atomically: true, encoding: .utf8)
        let tiny = await CommandRun.run(["token", "--user", "alice"], directory: directory.url)
        #expect(tiny.status == 1)
        #expect(tiny.errorOutput.hasSuffix("/.parley/server-secret does not hold a server secret of at least 16 characters\n"))
    }
}

@Suite("The .env file")
struct DotEnvTests {
    @Test("commands read ./.env beneath the environment, which wins")
    func readsDotEnv() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try "# settings\nPARLEY_SERVER_SECRET=\"dotenv-secret-0123456789\"\n".write(toFile: directory.path(".env"), atomically: true, encoding: .utf8)

        let fromFile = await CommandRun.run(["token", "--user", "frank"], directory: directory.url)
        #expect(try ClientTokenAuthority(secret: "dotenv-secret-0123456789").verify(fromFile.output.trimmingCharacters(in: .newlines)).subject == "frank")

        let overridden = await CommandRun.run(
            ["token", "--user", "frank"], environment: ["PARLEY_SERVER_SECRET": TokenCommandTests.secret], directory: directory.url
        )
        #expect(try ClientTokenAuthority(secret: TokenCommandTests.secret).verify(overridden.output.trimmingCharacters(in: .newlines)).subject == "frank")
    }

    @Test("a broken .env is one line, exit 1")
    func brokenDotEnv() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try "PARLEY_SERVER_SECRET=dotenv-secret-0123456789\nthis is not a setting\n".write(toFile: directory.path(".env"), atomically: true, encoding: .utf8)
        let run = await CommandRun.run(["token", "--user", "frank"], directory: directory.url)
        #expect(run.status == 1)
        #expect(run.output.isEmpty)
        #expect(run.errorOutput == "error: .env line 2: expected KEY=value, got \"this is not a setting\"\n")
    }
}

@Suite("parley console-token")
struct ConsoleTokenCommandTests {
    @Test("mints a console token the secret verifies, and no other secret does")
    func mintsVerifiableConsoleToken() async throws {
        let run = await CommandRun.run(["console-token", "--ttl", "30m"], environment: ["PARLEY_SERVER_SECRET": TokenCommandTests.secret])
        #expect(run.status == 0)
        #expect(run.errorOutput.isEmpty)
        let token = run.output.trimmingCharacters(in: .newlines)
        #expect(token.hasPrefix("pc_"))
        #expect(ConsoleToken.isValid(token, secret: TokenCommandTests.secret))
        #expect(!ConsoleToken.isValid(token, secret: "another-secret-0123456789"))
        #expect(!ConsoleToken.isValid(token, secret: TokenCommandTests.secret, now: Date(timeIntervalSinceNow: 31 * 60)))
        // A console token is no client token.
        #expect(throws: ClientTokenError.self) { try ClientTokenAuthority(secret: TokenCommandTests.secret).verify(token) }
    }

    @Test("--json prints the token and its expiry; the default lifetime is 12 hours")
    func json() async throws {
        let before = Int(Date().timeIntervalSince1970)
        let run = await CommandRun.run(["console-token", "--json"], environment: ["PARLEY_SERVER_SECRET": TokenCommandTests.secret])
        #expect(run.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["token", "expires_at"])
        let expiresAt = try #require(object["expires_at"] as? Int)
        #expect((before + 12 * 3600...before + 12 * 3600 + 5).contains(expiresAt))
    }

    @Test("a lifetime past seven days is a usage error")
    func tooLong() async throws {
        let run = await CommandRun.run(["console-token", "--ttl", "169h"], environment: ["PARLEY_SERVER_SECRET": TokenCommandTests.secret])
        #expect(run.status != 0)
        #expect(run.output.isEmpty)
    }
}
