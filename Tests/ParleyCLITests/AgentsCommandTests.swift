import Foundation
import ParleyCore
import Testing
@testable import ParleyCLI

/// `parley agents` against a running server: create, list, show, update, delete, and errors.
@Suite("parley agents")
struct AgentsCommandTests {
    @Test("create, list, show, update and delete over the REST API")
    func crud() async throws {
        let server = try CLITestServer.start()
        let work = try TemporaryDirectory()
        defer { work.remove() }
        let environment = server.environment

        let empty = await CommandRun.run(["agents", "list"], environment: environment)
        #expect(empty.status == 0)
        #expect(empty.output.isEmpty)
        #expect(empty.errorOutput == "No agents yet. Create one with 'parley agents create --name NAME'.\n")

        let created = await CommandRun.run(
            ["agents", "create", "--name", "Helper", "--instructions", "Be brief.", "--tools", "calculate,get_current_time"],
            environment: environment
        )
        #expect(created.status == 0, "\(created.errorOutput)")
        let helper = try JSONValue(parsing: created.output)
        let helperID = try #require(helper["id"]?.stringValue)
        #expect(helper["name"] == "Helper")
        #expect(helper["instructions"] == "Be brief.")
        #expect(helper["tools"] == [["type": "builtin", "name": "calculate"], ["type": "builtin", "name": "get_current_time"]])
        #expect(created.output.hasPrefix("{\n  \""), "printed indented")

        try #"{"name": "From file", "instructions": "Speak French.", "voice": "other", "manual_turns": true}"#
            .write(toFile: work.path("agent.json"), atomically: true, encoding: .utf8)
        let fromFile = await CommandRun.run(
            ["agents", "create", "agent.json", "--voice", "slt", "--url", server.url],
            environment: ["PARLEY_SERVER_SECRET": CLITestServer.secret], directory: work.url
        )
        #expect(fromFile.status == 0, "\(fromFile.errorOutput)")
        let french = try JSONValue(parsing: fromFile.output)
        let frenchID = try #require(french["id"]?.stringValue)
        #expect(french["name"] == "From file")
        #expect(french["voice"] == "slt", "options win over the file")
        #expect(french["manual_turns"] == true)

        let list = await CommandRun.run(["agents", "list"], environment: environment)
        #expect(list.status == 0)
        let lines = list.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines.first?.hasPrefix("ID ") == true && lines.first?.contains("NAME") == true)
        #expect(lines.contains { $0.hasPrefix(helperID) && $0.contains("Helper") })
        #expect(lines.contains { $0.hasPrefix(frenchID) && $0.contains("From file") && $0.hasSuffix("slt") })

        let json = await CommandRun.run(["agents", "list", "--json"], environment: environment)
        guard case .array(let agents)? = try JSONValue(parsing: json.output)["data"] else {
            Issue.record("no data array in \(json.output)")
            return
        }
        #expect(Set(agents.compactMap { $0["id"]?.stringValue }) == [helperID, frenchID])

        let shown = await CommandRun.run(["agents", "show", helperID], environment: environment)
        #expect(try JSONValue(parsing: shown.output) == helper)

        let renamed = await CommandRun.run(["agents", "update", helperID, "--name", "Renamed"], environment: environment)
        #expect(renamed.status == 0, "\(renamed.errorOutput)")
        #expect(try JSONValue(parsing: renamed.output)["name"] == "Renamed")
        let patched = await CommandRun.run(
            ["agents", "update", helperID, "-"], environment: environment, input: #"{"instructions": "Be very brief."}"#
        )
        let patchedAgent = try JSONValue(parsing: patched.output)
        #expect(patchedAgent["instructions"] == "Be very brief.")
        #expect(patchedAgent["name"] == "Renamed", "fields not mentioned stay")

        let deleted = await CommandRun.run(["agents", "delete", helperID], environment: environment)
        #expect(deleted.status == 0)
        #expect(deleted.output == "Deleted \(helperID).\n")
        let gone = await CommandRun.run(["agents", "show", helperID], environment: environment)
        #expect(gone.status == 1)
        #expect(gone.output.isEmpty)
        #expect(gone.errorOutput == "error: not found (HTTP 404): No such resource: /v1/agents/\(helperID)\n")
        let remaining = await CommandRun.run(["agents", "list", "--json"], environment: environment)
        #expect(remaining.output.contains(frenchID) && !remaining.output.contains(helperID))
        await server.stop()
    }

    @Test("the server's refusals and an unreachable server are one clear line, exit 1")
    func failures() async throws {
        let server = try CLITestServer.start()
        let work = try TemporaryDirectory()
        defer { work.remove() }

        let wrongSecret = await CommandRun.run(
            ["agents", "list", "--url", server.url], environment: ["PARLEY_SERVER_SECRET": "not-the-server-secret-at-all"]
        )
        #expect(wrongSecret.status == 1)
        #expect(wrongSecret.errorOutput.hasPrefix("error: the server refused the credentials (HTTP 401)"))
        #expect(wrongSecret.errorOutput.hasSuffix("; check PARLEY_SERVER_SECRET\n"))
        #expect(wrongSecret.errorOutput.filter { $0 == "\n" }.count == 1)

        try #"{"name": "Bad", "tools": [{"type": "bogus", "name": "x"}]}"#.write(toFile: work.path("bad.json"), atomically: true, encoding: .utf8)
        let invalid = await CommandRun.run(["agents", "create", "bad.json"], environment: server.environment, directory: work.url)
        #expect(invalid.status == 1)
        #expect(invalid.errorOutput == "error: POST /v1/agents failed with HTTP 400: tools[0].type: \"bogus\" is not builtin or webhook\n")

        try "[1, 2]".write(toFile: work.path("array.json"), atomically: true, encoding: .utf8)
        let notObject = await CommandRun.run(["agents", "create", "array.json"], environment: server.environment, directory: work.url)
        #expect(notObject.errorOutput == "error: array.json does not hold a JSON object\n")
        let missing = await CommandRun.run(["agents", "create", "missing.json"], environment: server.environment, directory: work.url)
        #expect(missing.errorOutput == "error: cannot read missing.json: no such file\n")

        let port = server.app.port
        await server.stop()
        let unreachable = await CommandRun.run(
            ["agents", "list", "--url", "http://127.0.0.1:\(port)"], environment: ["PARLEY_SERVER_SECRET": CLITestServer.secret]
        )
        #expect(unreachable.status == 1)
        #expect(unreachable.errorOutput.hasPrefix("error: cannot reach http://127.0.0.1:\(port): "))
        #expect(unreachable.errorOutput.hasSuffix(" (is 'parley serve' running?)\n"))

        let badURL = await CommandRun.run(["agents", "list"], environment: ["PARLEY_SERVER_SECRET": CLITestServer.secret, "PARLEY_URL": "nope"])
        #expect(badURL.errorOutput == "error: PARLEY_URL 'nope' is not an http:// or https:// URL\n")
    }
}
