import Foundation
import ParleyCore
import ParleyNet
import ParleyTesting
import Testing

/// Three `parley serve` processes on 127.0.0.2–4 sharing one real PostgreSQL: any node
/// answers any call, commands reach the node that owns a session, a killed node's
/// conversation continues elsewhere, and the cluster-wide limits hold across nodes.
@Suite("cluster of three parley serve nodes on PostgreSQL")
struct ClusterServeTests {
    /// Three nodes A, B and C, their shared upstreams and database.
    struct LocalCluster {
        let nodes: [ServerProcess]
        let upstreams: FaultyUpstreams
        let root: URL
        var a: ServerProcess { nodes[0] }
        var b: ServerProcess { nodes[1] }
        var c: ServerProcess { nodes[2] }

        static func start(databaseURL: String, settings: [String: String] = [:]) async throws -> LocalCluster {
            let upstreams = try FaultyUpstreams()
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("parley-cluster-\(UUID().uuidString)")
            var nodes: [ServerProcess] = []
            for (index, host) in ["127.0.0.2", "127.0.0.3", "127.0.0.4"].enumerated() {
                nodes.append(try await ServerProcess.start(
                    dataDirectory: root.appendingPathComponent("node\(index)"), upstreams: upstreams,
                    settings: settings.merging(["PARLEY_DATABASE_URL": databaseURL]) { $1 }, host: host
                ))
            }
            return LocalCluster(nodes: nodes, upstreams: upstreams, root: root)
        }

        /// Stops every node still running (SIGTERM) and the upstreams.
        func stop() async {
            for node in nodes where node.process.isRunning { _ = await node.terminate() }
            upstreams.stop()
            try? FileManager.default.removeItem(at: root)
        }

        /// A new agent and an instance of it, created through `node`.
        func instance(via node: ServerProcess) async throws -> (id: String, conversationID: String) {
            let agent = try await ReliabilityCrashRecoveryTests.rest(node, "POST", "/v1/agents", #"{"name":"Clustered"}"#)
            let instance = try await ReliabilityCrashRecoveryTests.rest(node, "POST", "/v1/agents/\(agent["id"]?.stringValue ?? "")/instances", #"{"user":"ada"}"#)
            return (try #require(instance["id"]?.stringValue), try #require(instance["conversation_id"]?.stringValue))
        }
    }

    /// A request with the server secret: the status and the decoded body.
    static func call(_ node: ServerProcess, _ method: String, _ path: String) async throws -> (status: Int, body: JSONValue) {
        let response = try await HTTPClient.shared.send(HTTPClient.Request(
            url: node.baseURL.appendingPathComponent(path), method: method, headers: ["Authorization": "Bearer \(ServerProcess.secret)"]
        ))
        return (response.status, (try? JSONDecoder().decode(JSONValue.self, from: response.body)) ?? .null)
    }

    static func connect(_ node: ServerProcess, instance: String) async throws -> ProcessRealtimeClient {
        try await ProcessRealtimeClient.connect(port: node.port, query: "?instance=\(instance)", host: node.host)
    }

    /// Starts a turn without waiting for it to end.
    static func startTurn(_ client: ProcessRealtimeClient, _ text: String) throws {
        try client.socket.send(.text(#"{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"\#(text)"}]}}"#))
        try client.socket.send(.text(#"{"type":"response.create"}"#))
    }

    static func closes(_ client: ProcessRealtimeClient) async -> Bool {
        await ResourceProbe.eventually(within: 30) { await client.isClosed }
    }

    @Test("created on A, taken over and talked to through B, interrupted and deleted through C, read from A")
    func anyNodeReachesTheSession() async throws {
        try await ThrowawayPostgres.with { postgres in
            let cluster = try await LocalCluster.start(databaseURL: try await postgres.createDatabase())
            do {
                let (instance, conversation) = try await cluster.instance(via: cluster.a)
                let onA = try await Self.connect(cluster.a, instance: instance)
                _ = await onA.next("session.created")
                let onB = try await Self.connect(cluster.b, instance: instance)
                _ = await onB.next("session.created")
                #expect(await Self.closes(onA), "the first connection stayed open after B took the instance over")

                #expect(try await onB.turn("first question").status == "completed")
                let shown = try await Self.call(cluster.c, "GET", "/v1/instances/\(instance)").body
                #expect(shown["status"]?.stringValue == "listening", "the owner B reports its session between turns")
                #expect(shown["owner_url"]?.stringValue == "http://127.0.0.3:\(cluster.b.port)")

                // A reply that keeps speaking (its audio trickles in), interrupted through C.
                try cluster.upstreams.speech.set(.trickleAfterFirstOutput)
                try Self.startTurn(onB, "tell me a long story")
                #expect(await onB.next("response.output_audio.delta") != nil)
                let interrupted = try await Self.call(cluster.c, "POST", "/v1/instances/\(instance)/interrupt")
                #expect(interrupted.status == 200, "\(interrupted.body)")
                let done = await onB.next("response.done", seconds: 10)
                #expect(done?["response"]?["status"]?.stringValue == "cancelled")

                let deleted = try await Self.call(cluster.c, "DELETE", "/v1/instances/\(instance)")
                #expect(deleted.status == 200 && deleted.body["status"]?.stringValue == "ended")
                #expect(await Self.closes(onB), "B's socket stayed open after the instance was deleted")
                let events = await onB.events
                let cancelledAt = events.firstIndex { $0["type"]?.stringValue == "response.done" && $0["response"]?["status"]?.stringValue == "cancelled" }
                #expect(cancelledAt.map { events[$0...].allSatisfy { $0["type"]?.stringValue != "response.output_audio.delta" } } == true, "audio after the interruption")
                try cluster.upstreams.speech.set(.healthy)

                let items = try await Self.call(cluster.a, "GET", "/v1/conversations/\(conversation)/items").body["data"]?.arrayElements ?? []
                #expect(items.prefix(3).map { $0["text"]?.stringValue } == ["first question", FaultyUpstream.reply, "tell me a long story"], "\(items)")
                #expect(try await Self.call(cluster.a, "GET", "/v1/instances/\(instance)").body["status"]?.stringValue == "ended")
                #expect(try await Self.call(cluster.a, "POST", "/v1/instances/\(instance)/interrupt").status == 409)
            } catch {
                await cluster.stop()
                throw error
            }
            await cluster.stop()
        }
    }

    @Test("kill -9 of B mid-turn: the instance is lost, then resumed through C with every completed item")
    func conversationOutlivesAKilledNode() async throws {
        try await ThrowawayPostgres.with { postgres in
            let cluster = try await LocalCluster.start(databaseURL: try await postgres.createDatabase())
            do {
                let (instance, conversation) = try await cluster.instance(via: cluster.a)
                let onB = try await Self.connect(cluster.b, instance: instance)
                var completed: [String] = []
                for turn in 1...2 {
                    let (status, _) = try await onB.turn("turn \(turn)")
                    #expect(status == "completed")
                }
                for event in await onB.events where event["type"]?.stringValue == "response.done" {
                    completed += (event["response"]?["output"]?.arrayElements ?? []).compactMap { $0["id"]?.stringValue }
                }
                try cluster.upstreams.speech.set(.trickleAfterFirstOutput)
                try Self.startTurn(onB, "turn 3")
                #expect(await onB.next("response.output_audio.delta") != nil)
                await cluster.b.kill9()
                try cluster.upstreams.speech.set(.healthy)

                // The sweeper (on A or C) declares B dead after 10 s of silence.
                let lost = await ResourceProbe.eventually(within: 40) {
                    (try? await Self.call(cluster.a, "GET", "/v1/instances/\(instance)").body["status"]?.stringValue) == "lost"
                }
                #expect(lost, "the killed node's instance never became lost")

                let onC = try await Self.connect(cluster.c, instance: instance)
                #expect(try await onC.turn("turn 4").status == "completed")
                let items = try await Self.call(cluster.a, "GET", "/v1/conversations/\(conversation)/items").body["data"]?.arrayElements ?? []
                let storedIDs = Set(items.compactMap { $0["id"]?.stringValue })
                #expect(completed.count == 2 && completed.allSatisfy(storedIDs.contains), "completed items lost: \(completed.filter { !storedIDs.contains($0) })")
                let userTexts = items.compactMap { $0["role"]?.stringValue == "user" ? $0["text"]?.stringValue : nil }
                #expect(userTexts.starts(with: ["turn 1", "turn 2"]) && userTexts.last == "turn 4", "\(userTexts)")
                let sent = cluster.upstreams.languageModel.latestChatRequest?["messages"]?.arrayElements?.compactMap { $0["content"]?.stringValue } ?? []
                #expect(sent.contains("turn 1") && sent.contains("turn 2"), "the history C sent to the model: \(sent)")
                let shown = try await Self.call(cluster.a, "GET", "/v1/instances/\(instance)").body
                #expect(shown["status"]?.stringValue == "listening" && shown["owner_url"]?.stringValue == "http://127.0.0.4:\(cluster.c.port)")
                onC.close()
            } catch {
                await cluster.stop()
                throw error
            }
            await cluster.stop()
        }
    }

    @Test("admissions racing across the nodes never exceed the cluster maximum; tokens are counted cluster-wide")
    func clusterLimitsHold() async throws {
        try await ThrowawayPostgres.with { postgres in
            let maximum = 4
            let cluster = try await LocalCluster.start(
                databaseURL: try await postgres.createDatabase(),
                settings: ["PARLEY_CLUSTER_MAX_SESSIONS": String(maximum), "PARLEY_TOKEN_RATE_PER_MINUTE": "3"]
            )
            do {
                let clients = try await withThrowingTaskGroup(of: (ProcessRealtimeClient, admitted: Bool).self) { group in
                    for index in 0..<12 {
                        let node = cluster.nodes[index % 3]
                        group.addTask {
                            let client = try await ProcessRealtimeClient.connect(port: node.port, host: node.host)
                            let first = await client.next("session.created", seconds: 20)
                            return (client, first != nil)
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                let admitted = clients.filter(\.admitted)
                #expect(admitted.count == maximum)
                for (client, isAdmitted) in clients where !isAdmitted {
                    let refusal = await client.events.first { $0["type"]?.stringValue == "error" }
                    #expect(refusal?["error"]?["code"]?.stringValue == "too_many_sessions")
                    #expect(await Self.closes(client))
                }
                // A session that leaves makes room, on any node.
                admitted.first?.0.close()
                let roomAgain = await ResourceProbe.eventually(within: 20) {
                    guard let client = try? await ProcessRealtimeClient.connect(port: cluster.c.port, host: cluster.c.host) else { return false }
                    defer { client.close() }
                    return await client.next("session.created", seconds: 5) != nil
                }
                #expect(roomAgain)
                admitted.forEach { $0.0.close() }

                var minted: [Int] = []
                for index in 0..<6 {
                    let node = cluster.nodes[index % 3]
                    let response = try await HTTPClient.shared.send(HTTPClient.Request(
                        url: node.baseURL.appendingPathComponent("/v1/tokens"), method: "POST",
                        headers: ["Authorization": "Bearer \(ServerProcess.secret)", "Content-Type": "application/json"],
                        body: Data(#"{"user":"ada"}"#.utf8)
                    ))
                    minted.append(response.status)
                }
                #expect(minted == [201, 201, 201, 429, 429, 429])
            } catch {
                await cluster.stop()
                throw error
            }
            await cluster.stop()
        }
    }

    @Test("B frozen past the fence (SIGSTOP): the conversation moves to C with every acknowledged item; B, thawed, ends its session and registers again")
    func aFrozenNodeEndsItsSessionsWhenItWakes() async throws {
        try await ThrowawayPostgres.with { postgres in
            let databaseURL = try await postgres.createDatabase()
            let cluster = try await LocalCluster.start(databaseURL: databaseURL)
            let bURL = "http://127.0.0.3:\(cluster.b.port)"
            do {
                let (instance, conversation) = try await cluster.instance(via: cluster.a)
                let onB = try await Self.connect(cluster.b, instance: instance)
                #expect(try await onB.turn("before the freeze").status == "completed")
                kill(cluster.b.pid, SIGSTOP)
                let declaredDead = await ResourceProbe.eventually(within: 40) {
                    (try? await Self.nodeFlags(databaseURL: databaseURL, nodeURL: bURL)) == "f|t"
                }
                #expect(declaredDead, "the frozen node was never declared dead")
                let onC = try await Self.connect(cluster.c, instance: instance)
                #expect(try await onC.turn("while B is frozen").status == "completed")

                kill(cluster.b.pid, SIGCONT)
                // B's heartbeat finds it was declared dead: it ends its session, then registers again.
                #expect(await Self.closes(onB), "the thawed node kept talking in a conversation it no longer holds")
                let registered = await ResourceProbe.eventually(within: 20) {
                    (try? await Self.nodeFlags(databaseURL: databaseURL, nodeURL: bURL)) == "f|f"
                }
                #expect(registered, "the thawed node did not register again")
                let fresh = try await ProcessRealtimeClient.connect(port: cluster.b.port, host: cluster.b.host)
                #expect(await fresh.next("session.created") != nil, "the registered node takes new sessions")
                fresh.close()

                #expect(try await onC.turn("after B woke").status == "completed")
                let items = try await Self.call(cluster.a, "GET", "/v1/conversations/\(conversation)/items").body["data"]?.arrayElements ?? []
                let userTexts = items.compactMap { $0["role"]?.stringValue == "user" ? $0["text"]?.stringValue : nil }
                #expect(userTexts == ["before the freeze", "while B is frozen", "after B woke"], "\(userTexts)")
                onC.close()
            } catch {
                kill(cluster.b.pid, SIGCONT)
                await cluster.stop()
                throw error
            }
            await cluster.stop()
        }
    }

    @Test("interrupt and DELETE sent to A reach a WebRTC call held by B and a phone call held by C")
    func commandsReachCallsOnOtherNodes() async throws {
        try await ThrowawayPostgres.with { postgres in
            let databaseURL = try await postgres.createDatabase()
            let cluster = try await LocalCluster.start(
                databaseURL: databaseURL, settings: ["PARLEY_TWILIO_AUTH_TOKEN": TestServer.twilioAuthToken]
            )
            func activeSessions(_ node: ServerProcess) async throws -> Int {
                let metrics = try await HTTPClient.shared.send(HTTPClient.Request(url: node.baseURL.appendingPathComponent("/metrics")))
                let line = String(decoding: metrics.body, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("parley_active_sessions ") }
                return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? -1
            }
            do {
                let (instance, conversation) = try await cluster.instance(via: cluster.a)
                let offer = try await WebRTCCallTests.post(
                    baseURL: cluster.b.baseURL, query: "?instance=\(instance)", body: WebRTCCallTests.offer, contentType: "application/sdp", token: ServerProcess.secret
                )
                #expect(offer.status == 201, "\(offer.text)")
                let callSID = "CAcommands0001"
                let answer = try await TwilioTestCall.answer(baseURL: cluster.c.baseURL, form: TwilioTestCall.callForm(callSID: callSID))
                let phone = try await TwilioTestCall.connect(answer, callSID: callSID)
                #expect(await ResourceProbe.eventually(within: 20) { (try? await activeSessions(cluster.c)) == 1 })
                let phoneConversation = try await ChildProcess.run(
                    "/usr/lib/postgresql/15/bin/psql",
                    ["-tAqX", "-c", "SELECT id FROM conversations WHERE id <> '\(conversation)' ORDER BY created_at DESC LIMIT 1", databaseURL]
                ).output.trimmingCharacters(in: .whitespacesAndNewlines)

                let interrupted = try await Self.call(cluster.a, "POST", "/v1/instances/\(instance)/interrupt")
                #expect(interrupted.status == 200, "the interrupt did not reach B's WebRTC call: \(interrupted.body)")
                #expect(try await Self.call(cluster.a, "DELETE", "/v1/conversations/\(conversation)").status == 200)
                #expect(await ResourceProbe.eventually(within: 10) { (try? await activeSessions(cluster.b)) == 0 }, "B's WebRTC call outlived its conversation")
                #expect(try await Self.call(cluster.a, "DELETE", "/v1/conversations/\(phoneConversation)").status == 200)
                #expect(await phone.closes(within: 10), "C's phone call outlived its conversation")
                #expect(await ResourceProbe.eventually(within: 10) { (try? await activeSessions(cluster.c)) == 0 })
            } catch {
                await cluster.stop()
                throw error
            }
            await cluster.stop()
        }
    }

    @Test("a call recorded on B is downloaded through A, by range too, and DELETE through C removes it from B")
    func recordingsAreServedAndDeletedThroughAnyNode() async throws {
        try await ThrowawayPostgres.with { postgres in
            let cluster = try await LocalCluster.start(databaseURL: try await postgres.createDatabase(), settings: ["PARLEY_RECORDINGS": "on"])
            func download(_ node: ServerProcess, _ conversation: String, range: String? = nil) async throws -> (status: Int, bytes: Data) {
                var headers = ["Authorization": "Bearer \(ServerProcess.secret)"]
                if let range { headers["Range"] = range }
                let response = try await HTTPClient.shared.send(HTTPClient.Request(
                    url: node.baseURL.appendingPathComponent("/v1/conversations/\(conversation)/recording"), headers: headers
                ))
                return (response.status, response.body)
            }
            do {
                let (instance, conversation) = try await cluster.instance(via: cluster.a)
                let onB = try await Self.connect(cluster.b, instance: instance)
                #expect(try await onB.turn("record this").status == "completed")
                onB.close()
                // The recording is finished moments after the session closes: both copies then agree.
                let relayedWhole = await ResourceProbe.eventually(within: 20) {
                    guard let onB = try? await download(cluster.b, conversation), onB.status == 200, onB.bytes.count > 44,
                          let throughA = try? await download(cluster.a, conversation) else { return false }
                    return throughA.status == 200 && throughA.bytes == onB.bytes
                }
                #expect(relayedWhole, "A did not relay B's recording whole")
                let header = try await download(cluster.a, conversation, range: "bytes=0-3")
                #expect(header.status == 206 && header.bytes == Data("RIFF".utf8))

                #expect(try await Self.call(cluster.c, "DELETE", "/v1/conversations/\(conversation)").status == 200)
                #expect(try await download(cluster.b, conversation).status == 404, "B kept the recording of a deleted conversation")
                #expect(try await download(cluster.a, conversation).status == 404)
            } catch {
                await cluster.stop()
                throw error
            }
            await cluster.stop()
        }
    }

    @Test("WebSocket, WebRTC and phone sessions count toward one cluster limit, and all three doors racing never exceed it")
    func everyDoorCountsTowardTheClusterLimit() async throws {
        try await ThrowawayPostgres.with { postgres in
            let maximum = 4
            let cluster = try await LocalCluster.start(
                databaseURL: try await postgres.createDatabase(),
                settings: ["PARLEY_CLUSTER_MAX_SESSIONS": String(maximum), "PARLEY_TWILIO_AUTH_TOKEN": TestServer.twilioAuthToken]
            )
            /// One attempt's end: admitted, or the refusal's code; and what to close afterwards.
            struct Attempt: Sendable {
                var door: String
                var admitted: Bool
                var refusal: String?
                var close: @Sendable () -> Void
            }
            do {
                let attempts = try await withThrowingTaskGroup(of: Attempt.self) { group in
                    for index in 0..<3 {
                        let node = cluster.nodes[index]
                        group.addTask {
                            let client = try await ProcessRealtimeClient.connect(port: node.port, host: node.host)
                            let admitted = await client.next("session.created", seconds: 20) != nil
                            let error = await client.events.first { $0["type"]?.stringValue == "error" }
                            return Attempt(door: "websocket", admitted: admitted, refusal: error?["error"]?["code"]?.stringValue, close: { client.close() })
                        }
                        group.addTask {
                            let reply = try await WebRTCCallTests.post(
                                baseURL: node.baseURL, body: WebRTCCallTests.offer, contentType: "application/sdp", token: ServerProcess.secret
                            )
                            let code = reply.status == 201 ? nil : (try? JSONValue(parsing: reply.text))?["error"]?["code"]?.stringValue
                            return Attempt(door: "webrtc", admitted: reply.status == 201, refusal: code, close: {})
                        }
                        group.addTask {
                            let callSID = "CA" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
                            let answer = try await TwilioTestCall.answer(baseURL: node.baseURL, form: TwilioTestCall.callForm(callSID: callSID))
                            try #require(answer.streamURL != nil, "the webhook answered \(answer.status): \(answer.body)")
                            let call = try await TwilioTestCall.connect(answer, callSID: callSID)
                            // A refused stream is closed at once; an admitted one stays open.
                            let refused = await call.closes(within: 8)
                            return Attempt(door: "twilio", admitted: !refused, refusal: refused ? "closed" : nil, close: { try? call.hangUp() })
                        }
                    }
                    return try await group.reduce(into: [Attempt]()) { $0.append($1) }
                }
                let admitted = attempts.filter(\.admitted)
                #expect(admitted.count == maximum, "admitted: \(admitted.map(\.door))")
                for attempt in attempts where !attempt.admitted && attempt.door != "twilio" {
                    #expect(attempt.refusal == "too_many_sessions", "\(attempt.door) refused with \(attempt.refusal ?? "nothing")")
                }
                var active = 0
                for node in cluster.nodes {
                    let metrics = try await HTTPClient.shared.send(HTTPClient.Request(url: node.baseURL.appendingPathComponent("/metrics")))
                    let line = String(decoding: metrics.body, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("parley_active_sessions ") }
                    active += line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
                }
                #expect(active == maximum, "sessions open on the three nodes together")
                attempts.forEach { $0.close() }
            } catch {
                await cluster.stop()
                throw error
            }
            await cluster.stop()
        }
    }

    @Test("one user's sessions are capped on every node together, and another user's are not")
    func perUserLimitsHoldAcrossNodes() async throws {
        try await ThrowawayPostgres.with { postgres in
            let cluster = try await LocalCluster.start(
                databaseURL: try await postgres.createDatabase(), settings: ["PARLEY_MAX_SESSIONS_PER_USER": "2"]
            )
            do {
                func token(_ user: String) async throws -> String {
                    let minted = try await ReliabilityCrashRecoveryTests.rest(cluster.a, "POST", "/v1/tokens", #"{"user":"\#(user)"}"#)
                    return try #require(minted["token"]?.stringValue)
                }
                func open(_ node: ServerProcess, _ user: String) async throws -> (ProcessRealtimeClient, admitted: Bool) {
                    let client = try await ProcessRealtimeClient.connect(port: node.port, host: node.host, token: try await token(user))
                    return (client, await client.next("session.created", seconds: 20) != nil)
                }
                let onA = try await open(cluster.a, "alice")
                let onB = try await open(cluster.b, "alice")
                #expect(onA.admitted && onB.admitted)
                let onC = try await open(cluster.c, "alice")
                #expect(!onC.admitted, "a third session of alice's was admitted on another node")
                let refusal = await onC.0.events.first { $0["type"]?.stringValue == "error" }
                #expect(refusal?["error"]?["code"]?.stringValue == "too_many_sessions_for_user")
                #expect(await Self.closes(onC.0))
                let bobs = try await open(cluster.c, "bob")
                #expect(bobs.admitted, "bob was refused for alice's sessions")
                // One of alice's sessions ends on A; she may open one on C.
                onA.0.close()
                #expect(await ResourceProbe.eventually(within: 20) {
                    guard let again = try? await open(cluster.c, "alice") else { return false }
                    defer { again.0.close() }
                    return again.admitted
                })
                [onB.0, bobs.0].forEach { $0.close() }
            } catch {
                await cluster.stop()
                throw error
            }
            await cluster.stop()
        }
    }

    @Test("PostgreSQL restarted mid-conversation on B: no acknowledged item lost, and commands reach B again")
    func databaseRestartUnderTheCluster() async throws {
        try await ThrowawayPostgres.with { postgres in
            let cluster = try await LocalCluster.start(databaseURL: try await postgres.createDatabase())
            do {
                let (instance, conversation) = try await cluster.instance(via: cluster.a)
                let onB = try await Self.connect(cluster.b, instance: instance)
                let turns = 8
                #expect(try await onB.turn("turn 0").status == "completed")
                let talking = Task {
                    var statuses: [String] = []
                    for turn in 1..<turns { statuses.append((try? await onB.turn("turn \(turn)"))?.status ?? "failed") }
                    return statuses
                }
                try await postgres.restart()
                #expect(await talking.value == Array(repeating: "completed", count: turns - 1))
                let completed = await onB.events.filter { $0["type"]?.stringValue == "response.done" }
                    .flatMap { $0["response"]?["output"]?.arrayElements ?? [] }.compactMap { $0["id"]?.stringValue }
                let stored = try await Self.call(cluster.a, "GET", "/v1/conversations/\(conversation)/items").body["data"]?.arrayElements ?? []
                let storedIDs = Set(stored.compactMap { $0["id"]?.stringValue })
                #expect(stored.compactMap { $0["role"]?.stringValue == "user" ? $0["text"]?.stringValue : nil } == (0..<turns).map { "turn \($0)" })
                #expect(completed.count == turns && completed.allSatisfy(storedIDs.contains), "assistant items lost: \(completed.filter { !storedIDs.contains($0) })")

                // B listens again: a command from C reaches it and is acknowledged (there is nothing to cancel).
                let reached = await ResourceProbe.eventually(within: 20) {
                    (try? await Self.call(cluster.c, "POST", "/v1/instances/\(instance)/interrupt").status) == 200
                }
                #expect(reached, "C's interrupt never reached B after the restart")
                // The client leaves: B lets the instance go, and it waits for its next connection.
                onB.close()
                let released = await ResourceProbe.eventually(within: 20) {
                    let shown = try? await Self.call(cluster.a, "GET", "/v1/instances/\(instance)").body
                    return shown?["status"]?.stringValue == "waiting" && shown?["owner_node"] == nil
                }
                #expect(released, "the instance stayed live after its client left")
            } catch {
                await cluster.stop()
                throw error
            }
            await cluster.stop()
        }
    }
}
