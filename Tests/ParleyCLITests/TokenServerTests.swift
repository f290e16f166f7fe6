import Foundation
import ParleyCore
import ParleyServer
import Testing
@testable import ParleyCLI

/// Tokens minted by `parley token` open realtime sessions on a server with the same secret.
@Suite("parley token against a server")
struct TokenServerTests {
    private func mint(_ arguments: [String], secret: String = CLITestServer.secret) async throws -> String {
        let run = await CommandRun.run(["token"] + arguments, environment: ["PARLEY_SERVER_SECRET": secret])
        try #require(run.status == 0, "\(run.errorOutput)")
        return run.output.trimmingCharacters(in: .newlines)
    }

    private func openSession(_ server: CLITestServer, token: String, agentID: String? = nil) async throws {
        let connection = ServerConnection(baseURL: URL(string: server.url)!, credential: token)
        let (link, _) = try await RealtimeLink.open(connection, agentID: agentID)
        link.close()
    }

    @Test("the server accepts the token, in scope; refuses it out of scope or signed with another secret")
    func verifiedByServer() async throws {
        let server = try CLITestServer.start()
        let created = await CommandRun.run(["agents", "create", "--name", "Scoped"], environment: server.environment)
        let agentID = try #require(try JSONValue(parsing: created.output)["id"]?.stringValue)

        try await openSession(server, token: try await mint(["--user", "alice"]))
        try await openSession(server, token: try await mint(["--user", "alice", "--agent", agentID, "--ttl", "1m"]), agentID: agentID)

        let scoped = try await mint(["--user", "alice", "--agent", "agent_other"])
        await #expect(throws: CommandFailure.self) { try await openSession(server, token: scoped, agentID: agentID) }
        let forged = try await mint(["--user", "alice"], secret: "some-other-secret-0123456789")
        let refusal = await #expect(throws: CommandFailure.self) { try await openSession(server, token: forged) }
        #expect(refusal?.message == "the server refused the credentials for a realtime session (HTTP 401); check PARLEY_SERVER_SECRET")
        await server.stop()
    }
}
