import Foundation
import ParleyCore
import ParleyTesting
import Testing

/// `parley serve` with `PARLEY_DATABASE_URL`: the store lives in PostgreSQL, so a second
/// server on another data directory sees what the first stored, also after a `kill -9`;
/// a bad URL or an unreachable database stops the start with one clear line.
@Suite("parley serve on PostgreSQL")
struct PostgresServeTests {
    @Test("a bad database URL or an unreachable database is one line at start")
    func badOrUnreachableDatabase() async throws {
        let upstreams = try FaultyUpstreams()
        defer { upstreams.stop() }
        let closed = try ClosedPort()
        let cases = [
            ("mysql://parley@db/parley", #"parley serve: PARLEY_DATABASE_URL: "mysql://parley@db/parley" is not a postgresql:// URL"#),
            ("postgresql://parley:hunter22@127.0.0.1:\(closed.port)/parley",
             "parley serve: PARLEY_DATABASE_URL: cannot connect to postgresql://parley:***@127.0.0.1:\(closed.port)/parley: "),
        ]
        for (url, expected) in cases {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-pg-serve-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let server = try ServerProcess(
                arguments: ["--port", "0", "--data-dir", directory.appendingPathComponent("data").path],
                environment: ServerProcess.environment(upstreams: upstreams).merging(["PARLEY_DATABASE_URL": url]) { $1 },
                dataDirectory: directory
            )
            let status = await SecurityServeTests.exitStatus(of: server, within: 30)
            if status == nil { _ = await server.terminate() }
            #expect(status == 1, "\(url): exit status \(status.map(String.init) ?? "none: it kept running")")
            let line = server.standardError.split(separator: "\n").first { $0.hasPrefix("parley serve:") }.map(String.init) ?? ""
            #expect(line.hasPrefix(expected), "\(server.standardError)")
            #expect(!server.standardError.contains("hunter22"), "the password was printed")
        }
    }

    @Test("two servers share one PostgreSQL: a conversation continues through the second after the first is killed")
    func conversationOutlivesItsServer() async throws {
        try await ThrowawayPostgres.with { postgres in
            let settings = ["PARLEY_DATABASE_URL": try await postgres.createDatabase()]
            let upstreams = try FaultyUpstreams()
            defer { upstreams.stop() }
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("parley-pg-serve-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: root) }

            let first = try await ServerProcess.start(dataDirectory: root.appendingPathComponent("a"), upstreams: upstreams, settings: settings)
            let agent = try await ReliabilityCrashRecoveryTests.rest(first, "POST", "/v1/agents", #"{"name":"Shared"}"#)
            let instance = try await ReliabilityCrashRecoveryTests.rest(first, "POST", "/v1/agents/\(agent["id"]?.stringValue ?? "")/instances", #"{"user":"ada"}"#)
            let instanceID = try #require(instance["id"]?.stringValue)
            let conversationID = try #require(instance["conversation_id"]?.stringValue)
            let client = try await ProcessRealtimeClient.connect(port: first.port, query: "?instance=\(instanceID)")
            #expect(try await client.turn("remember the marker 4711").status == "completed")
            client.close()
            await first.kill9()

            let second = try await ServerProcess.start(dataDirectory: root.appendingPathComponent("b"), upstreams: upstreams, settings: settings)
            let items = try await ReliabilityCrashRecoveryTests.rest(second, "GET", "/v1/conversations/\(conversationID)/items")["data"]?.arrayElements ?? []
            #expect(items.map { $0["role"]?.stringValue } == ["user", "assistant"], "\(items)")
            #expect(items.first?["text"]?.stringValue == "remember the marker 4711")
            let resumed = try await ProcessRealtimeClient.connect(port: second.port, query: "?instance=\(instanceID)")
            #expect(try await resumed.turn("and now?").status == "completed")
            let sent = upstreams.languageModel.latestChatRequest?["messages"]?.arrayElements?.compactMap { $0["content"]?.stringValue } ?? []
            #expect(sent.contains("remember the marker 4711"), "the history sent to the model: \(sent)")
            resumed.close()
            #expect(await second.terminate() == 0)
        }
    }

    @Test("PostgreSQL restarted mid-conversation: the session keeps talking and every completed item is stored")
    func databaseRestartMidConversation() async throws {
        try await ThrowawayPostgres.with { postgres in
            let settings = ["PARLEY_DATABASE_URL": try await postgres.createDatabase()]
            let upstreams = try FaultyUpstreams()
            defer { upstreams.stop() }
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-pg-serve-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let server = try await ServerProcess.start(dataDirectory: directory, upstreams: upstreams, settings: settings)
            let agent = try await ReliabilityCrashRecoveryTests.rest(server, "POST", "/v1/agents", #"{"name":"Steady"}"#)
            let instance = try await ReliabilityCrashRecoveryTests.rest(server, "POST", "/v1/agents/\(agent["id"]?.stringValue ?? "")/instances", #"{"user":"ada"}"#)
            let instanceID = try #require(instance["id"]?.stringValue)
            let conversationID = try #require(instance["conversation_id"]?.stringValue)
            let client = try await ProcessRealtimeClient.connect(port: server.port, query: "?instance=\(instanceID)")

            // A first turn, then turns back to back while the database restarts under them.
            let turns = 8
            #expect(try await client.turn("turn 0").status == "completed")
            let talking = Task {
                var statuses: [String] = []
                for turn in 1..<turns { statuses.append((try? await client.turn("turn \(turn)"))?.status ?? "failed") }
                return statuses
            }
            try await postgres.restart()
            let doneWhenBack = await client.events.filter { $0["type"]?.stringValue == "response.done" }.count
            #expect(doneWhenBack < turns, "every turn ended before the database was back: nothing overlapped the restart")
            #expect(await talking.value == Array(repeating: "completed", count: turns - 1))

            let events = await client.events
            let completed = events.filter { $0["type"]?.stringValue == "response.done" }
                .flatMap { $0["response"]?["output"]?.arrayElements ?? [] }.compactMap { $0["id"]?.stringValue }
            client.close()
            let stored = try await ReliabilityCrashRecoveryTests.rest(server, "GET", "/v1/conversations/\(conversationID)/items")["data"]?.arrayElements ?? []
            #expect(stored.compactMap { $0["role"]?.stringValue == "user" ? $0["text"]?.stringValue : nil } == (0..<turns).map { "turn \($0)" })
            let storedIDs = Set(stored.compactMap { $0["id"]?.stringValue })
            #expect(completed.count == turns && completed.allSatisfy(storedIDs.contains), "assistant items lost: \(completed.filter { !storedIDs.contains($0) })")
            #expect(await server.terminate() == 0)
        }
    }
}
