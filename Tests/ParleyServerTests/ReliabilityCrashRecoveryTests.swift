import Foundation
import ParleyCore
import ParleyNet
import ParleyTesting
import Testing

/// `parley serve` killed with SIGKILL at random points of a scripted conversation, and
/// restarted on the same data directory (or the same PostgreSQL database): SQLite's database
/// passes its integrity check, every item the client saw completed is stored with its text,
/// and the resumed conversation sends its history to the model.
///
/// CI runs 5 kills per engine; `scripts/reliability` runs 100 (`PARLEY_CRASH_ITERATIONS`).
@Suite("Reliability: crash recovery")
struct ReliabilityCrashRecoveryTests {
    static var iterations: Int { ProcessInfo.processInfo.environment["PARLEY_CRASH_ITERATIONS"].flatMap(Int.init) ?? 5 }

    @Test("kill -9 mid-conversation loses no completed item, and the conversation resumes with its history", arguments: ["sqlite", "postgresql"])
    func killAndRestart(engine: String) async throws {
        guard engine == "postgresql" else { return try await killAndRestart(settings: [:]) }
        try await ThrowawayPostgres.with { postgres in
            try await killAndRestart(settings: ["PARLEY_DATABASE_URL": try await postgres.createDatabase()])
        }
    }

    /// The test on the store `settings` name (none: SQLite in the data directory).
    private func killAndRestart(settings: [String: String]) async throws {
        let usesSQLite = settings["PARLEY_DATABASE_URL"] == nil
        let upstreams = try FaultyUpstreams()
        defer { upstreams.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var server = try await ServerProcess.start(dataDirectory: directory, upstreams: upstreams, settings: settings)
        let agent = try await Self.rest(server, "POST", "/v1/agents", #"{"name":"Durable"}"#)
        let instance = try await Self.rest(server, "POST", "/v1/agents/\(agent["id"]?.stringValue ?? "")/instances", #"{"user":"ada"}"#)
        let instanceID = try #require(instance["id"]?.stringValue)
        let conversationID = try #require(instance["conversation_id"]?.stringValue)

        var expected: [String: String] = [:]  // every item seen completed → its text
        var latestUserText: String?
        var killsMidResponse = 0
        var announcedButLost = 0
        for iteration in 0..<Self.iterations {
            let client = try await ProcessRealtimeClient.connect(port: server.port, query: "?instance=\(instanceID)")
            #expect(await client.next("session.created") != nil, "iteration \(iteration): no session")

            // The resumed conversation: the model gets what was said before the crash.
            if iteration > 0 {
                let resumed = try await client.turn("iteration \(iteration) resumes")
                #expect(resumed.status == "completed", "iteration \(iteration): the first turn after a restart failed")
                let messages = upstreams.languageModel.latestChatRequest?["messages"]?.arrayElements ?? []
                let sent = messages.compactMap { $0["content"]?.stringValue }
                if let latestUserText {
                    #expect(sent.contains(latestUserText), "iteration \(iteration): the history lost \(latestUserText.debugDescription)")
                }
            }

            // Turns back to back until the kill.
            let turns = Task {
                var turn = 0
                while !Task.isCancelled {
                    guard (try? await client.turn("iteration \(iteration) turn \(turn) marker")) != nil else { return }
                    turn += 1
                }
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 50...1_500)))
            await server.kill9()
            turns.cancel()
            let events = await client.events
            client.close()

            // What the client saw completed: a user item once the response after it started
            // (the item is stored before that response), an assistant item once its response is done.
            var pendingUser: (id: String, text: String)?
            var announced: [String] = []
            for event in events {
                switch event["type"]?.stringValue {
                case "conversation.item.done" where event["item"]?["role"]?.stringValue == "user":
                    let item = event["item"]
                    pendingUser = (item?["id"]?.stringValue ?? "", item?["content"]?.arrayElements?.first?["text"]?.stringValue ?? "")
                    announced.append(pendingUser?.id ?? "")
                case "response.created":
                    if let user = pendingUser {
                        expected[user.id] = user.text
                        latestUserText = user.text
                        pendingUser = nil
                    }
                case "response.done" where event["response"]?["status"]?.stringValue == "completed":
                    for item in event["response"]?["output"]?.arrayElements ?? [] {
                        guard let id = item["id"]?.stringValue else { continue }
                        expected[id] = item["content"]?.arrayElements?.first?["transcript"]?.stringValue ?? ""
                    }
                default:
                    break
                }
            }
            if events.last(where: { ["response.created", "response.done"].contains($0["type"]?.stringValue) })?["type"]?.stringValue == "response.created" {
                killsMidResponse += 1
            }

            if usesSQLite {
                #expect(try await Self.integrityCheck(directory.appendingPathComponent("parley.sqlite")) == "ok", "iteration \(iteration)")
            }
            server = try await ServerProcess.start(dataDirectory: directory, upstreams: upstreams, settings: settings)
            let stored = try await Self.rest(server, "GET", "/v1/conversations/\(conversationID)/items")["data"]?.arrayElements ?? []
            let storedTexts = Dictionary(stored.compactMap { item in item["id"]?.stringValue.map { ($0, item["text"]?.stringValue ?? "") } }) { first, _ in first }
            for (id, text) in expected {
                #expect(storedTexts[id] == text, "iteration \(iteration): item \(id) \(storedTexts[id] == nil ? "lost" : "changed to \(storedTexts[id]!.debugDescription)")")
            }
            #expect(storedTexts.count == stored.count, "iteration \(iteration): an item id is stored twice")
            announcedButLost += announced.filter { storedTexts[$0] == nil }.count
        }
        #expect(expected.count >= Self.iterations, "too few items completed to show anything: \(expected.count)")
        #expect(await server.terminate() == 0, "parley serve did not stop cleanly on SIGTERM")
        print("crash-recovery\t\(usesSQLite ? "sqlite" : "postgresql")\t\(Self.iterations) kills (\(killsMidResponse) mid-response)\t\(expected.count) completed items\t0 lost"
            + (usesSQLite ? "\tintegrity_check ok ×\(Self.iterations)" : "") + "\t\(announcedButLost) items announced done but not yet stored at the kill")
    }

    /// A JSON request with the server secret.
    static func rest(_ server: ServerProcess, _ method: String, _ path: String, _ body: String? = nil) async throws -> JSONValue {
        let response = try await HTTPClient.shared.send(HTTPClient.Request(
            url: server.baseURL.appendingPathComponent(path), method: method,
            headers: ["Authorization": "Bearer \(ServerProcess.secret)", "Content-Type": "application/json"],
            body: body.map { Data($0.utf8) }
        ))
        return (try? JSONDecoder().decode(JSONValue.self, from: response.body)) ?? .null
    }

    /// SQLite's own verdict on the database file (`ok` when sound).
    static func integrityCheck(_ database: URL) async throws -> String {
        let script = "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])"
        let result = try await ChildProcess.run(ChildProcess.python, ["-c", script, database.path], deadline: .seconds(60))
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// A realtime client of a server in another process, keeping every event.
final class ProcessRealtimeClient: Sendable {
    let socket: WebSocketConnection
    private let inbox = EventInbox()

    private init(socket: WebSocketConnection) {
        self.socket = socket
        let inbox = inbox
        Task {
            for await message in socket.messages {
                if case .text(let text) = message, let event = try? JSONValue(parsing: text) { await inbox.add(event) }
            }
            await inbox.close()
        }
    }

    static func connect(port: Int, query: String = "", host: String = "127.0.0.1", token: String = ServerProcess.secret) async throws -> ProcessRealtimeClient {
        let url = URL(string: "ws://\(host):\(port)/v1/realtime\(query)")!
        return ProcessRealtimeClient(socket: try await WebSocketClient.connect(to: url, headers: ["Authorization": "Bearer \(token)"]))
    }

    func next(_ type: String, seconds: Double = 30) async -> JSONValue? {
        await inbox.first(where: { $0["type"]?.stringValue == type }, seconds: seconds)
    }

    var events: [JSONValue] { get async { await inbox.all } }

    /// Whether the server closed the socket (or it was closed here).
    var isClosed: Bool { get async { await inbox.isClosed } }

    /// Says `text` and waits for the response.
    /// - Returns: the response's status.
    /// - Throws: when the connection is gone before the response is done.
    func turn(_ text: String) async throws -> (status: String, responseID: String) {
        try socket.send(.text(#"{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"\#(text)"}]}}"#))
        try socket.send(.text(#"{"type":"response.create"}"#))
        guard let done = await next("response.done") else { throw ServerProcessError(description: "no response.done") }
        return (done["response"]?["status"]?.stringValue ?? "", done["response"]?["id"]?.stringValue ?? "")
    }

    func close() { socket.close(code: 1000, reason: "done") }
}

extension JSONValue {
    /// The elements of an array, `nil` for anything else.
    var arrayElements: [JSONValue]? {
        if case .array(let elements) = self { elements } else { nil }
    }
}
