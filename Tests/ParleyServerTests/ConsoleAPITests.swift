import Foundation
import ParleyCore
import ParleyNet
@testable import ParleyServer
import ParleyStore
import ParleyTesting
import Testing

/// The operator console's API through a real server: who may open it, a spoken call as it
/// is live and once stored (surviving a restart), interrupting and ending a session, paging and
/// filtering calls, the percentiles, and agents with their validation errors.
@Suite struct ConsoleAPITests {
    static let routes: [(method: String, path: String)] = [
        ("GET", "/v1/console/sessions"), ("POST", "/v1/console/sessions/sess_x/interrupt"), ("POST", "/v1/console/sessions/sess_x/end"),
        ("GET", "/v1/console/calls"), ("GET", "/v1/console/conversations/conv_x"), ("GET", "/v1/console/conversations/conv_x/recording"),
        ("GET", "/v1/console/stats"), ("GET", "/v1/console/agents"), ("POST", "/v1/console/agents"), ("PATCH", "/v1/console/agents/agent_x"),
    ]

    @Test func aClientTokenIsRefusedOnEveryConsoleRouteAndAConsoleTokenOpensOnlyTheConsole() async throws {
        let server = try TestServer.start()
        defer { Task { await server.stop() } }
        let console = ConsoleToken.mint(secret: server.secret).token
        let expired = ConsoleToken.mint(secret: server.secret, lifetime: 1, now: Date(timeIntervalSinceNow: -60)).token
        let foreign = ConsoleToken.mint(secret: "another-secret-0123456789abcdef").token
        for route in Self.routes {
            let client = try await server.request(route.method, route.path, json: "{}", token: server.clientToken())
            #expect(client.status == 403 && client.body["error"]?["code"]?.stringValue == "forbidden", "\(route)")
            #expect(try await server.request(route.method, route.path, token: .some(nil)).status == 401, "\(route)")
            #expect(try await server.request(route.method, route.path, token: expired).status == 401, "\(route)")
            #expect(try await server.request(route.method, route.path, token: foreign).status == 401, "\(route)")
            let allowed = try await server.request(route.method, route.path, json: "{}", token: console).status
            #expect(![401, 403].contains(allowed), "\(route): \(allowed)")
        }
        // A console token is no server secret and no client token.
        #expect(try await server.request("GET", "/v1/agents", token: console).status == 401)
        #expect(try await server.request("POST", "/v1/tokens", json: #"{"user":"x"}"#, token: console).status == 401)
        // The page itself is anonymous, like the web client's: it asks for the token.
        let page = try await HTTPClient.shared.send(HTTPClient.Request(url: server.baseURL.appendingPathComponent("/console"), method: "GET"))
        #expect(page.status == 200 && String(decoding: page.body, as: UTF8.self).contains("Parley console"))
    }

    @Test func aSpokenCallIsLiveThenStoredWithItsTurnFiguresAcrossARestart() async throws {
        let server = try TestServer.start()
        let (conversationID, client) = try await RecordingTests.connect(server, agent: #"{"name":"Console","recordings":true}"#)
        try RecordingTests.send(RecordingTests.quiet(ms: 300) + RecordingTests.tone(ms: 800) + RecordingTests.quiet(ms: 900), to: client)
        #expect(await client.next("response.done") != nil)

        let live = try await server.request("GET", "/v1/console/sessions")
        let session = try #require(live.body["data"]?.arrayValue?.first)
        #expect(session["door"]?.stringValue == "websocket" && session["conversation_id"]?.stringValue == conversationID)
        #expect(session["node"]?.stringValue == "local" && session["agent_id"]?.stringValue != nil)
        #expect(["listening", "speaking", "thinking"].contains(session["state"]?.stringValue ?? ""))
        #expect(session["turns"]?.intValue == 1)
        let sessionID = try #require(session["id"]?.stringValue)

        try RecordingTests.send(RecordingTests.quiet(ms: 300), to: client)
        client.socket.close(code: 1000, reason: "done")
        await server.app.context.recordings.waitUntilWritten(conversationID: conversationID)
        #expect(await ResourceProbe.eventually(within: 10) {
            (try? await server.request("GET", "/v1/console/sessions").body["data"]?.arrayValue?.isEmpty) == true
        })
        let ended = try await server.request("GET", "/v1/console/conversations/\(conversationID)")
        await server.stop()

        // What the console shows of the call once it ended, and after a restart on the same data.
        let restarted = try TestServer.start { $0.dataDirectory = server.dataDirectory }
        defer { Task { await restarted.stop() } }
        let stored = try await restarted.request("GET", "/v1/console/conversations/\(conversationID)")
        for conversation in [ended, stored] {
            #expect(conversation.status == 200)
            let call = try #require(conversation.body["calls"]?.arrayValue?.first)
            #expect(call["id"]?.stringValue == sessionID && call["live"] == .bool(false) && call["turns"]?.intValue == 1)
            #expect(call["door"]?.stringValue == "websocket" && call["errors"]?.intValue == 0)
            let roles = conversation.body["items"]?.arrayValue?.compactMap { $0["role"]?.stringValue }
            #expect(roles == ["user", "assistant"])
            let turn = try #require(conversation.body["turns"]?.arrayValue?.first)
            #expect(conversation.body["turns"]?.arrayValue?.count == 1)
            #expect(turn["silence_window_ms"]?.doubleValue == 300)
            #expect(turn["detector_wait_ms"]?.doubleValue != nil)
            let figures = ["transcription_ms", "first_token_ms", "first_audio_ms"].compactMap { turn[$0]?.doubleValue }
            #expect(figures.count == 3 && figures == figures.sorted(), "\(turn.jsonText)")
            #expect(turn["voice_to_voice_ms"]?.doubleValue ?? 0 >= 300 + figures[2])
            #expect(turn["user_item_id"]?.stringValue == conversation.body["items"]?[0]?["id"]?.stringValue)
            // The caller's tone ended 1.1 s into the recording.
            let recordingMs = try #require(turn["recording_ms"]?.doubleValue)
            #expect((800...1_600).contains(recordingMs), "\(recordingMs)")
            #expect(conversation.body["recording"]?["url"]?.stringValue == "/v1/console/conversations/\(conversationID)/recording")
        }
        let recording = try await HTTPClient.shared.send(HTTPClient.Request(
            url: try #require(URL(string: "\(restarted.baseURL.absoluteString)/v1/console/conversations/\(conversationID)/recording")),
            method: "GET", headers: ["Authorization": "Bearer \(ConsoleToken.mint(secret: restarted.secret).token)"]
        ))
        #expect(recording.status == 200 && recording.headers["content-type"] == "audio/wav")
        let listed = try await restarted.request("GET", "/v1/console/calls")
        #expect(listed.body["data"]?.arrayValue?.map { $0["id"]?.stringValue } == [sessionID])
        let stats = try await restarted.get("/v1/console/stats?bucket=3600")
        #expect(stats.body["sessions"]?.intValue == 1 && stats.body["voice_to_voice"]?["count"]?.intValue == 1)
    }

    @Test func theOperatorInterruptsAndEndsALiveSession() async throws {
        let server = try TestServer.start()
        defer { Task { await server.stop() } }
        let (_, client) = try await RecordingTests.connect(server, agent: #"{"name":"Ended"}"#)
        _ = await client.next("session.created")
        let sessionID = try #require(try await server.request("GET", "/v1/console/sessions").body["data"]?[0]?["id"]?.stringValue)
        let interrupted = try await server.request("POST", "/v1/console/sessions/\(sessionID)/interrupt")
        #expect(interrupted.status == 200 && interrupted.body["object"]?.stringValue == "console.session.interrupted")
        let elsewhere = try await server.request("POST", "/v1/console/sessions/\(sessionID)/end", json: #"{"node":"node_other"}"#)
        #expect(elsewhere.status == 404 && elsewhere.body["error"]?["code"]?.stringValue == "session_not_found")
        let ended = try await server.request("POST", "/v1/console/sessions/\(sessionID)/end", json: #"{"node":"local"}"#)
        #expect(ended.status == 200 && ended.body["object"]?.stringValue == "console.session.ended")
        #expect(await client.closes(within: 10))
        #expect(await ResourceProbe.eventually(within: 10) {
            (try? await server.request("POST", "/v1/console/sessions/\(sessionID)/end").status) == 404
        })
        #expect(try await server.request("POST", "/v1/console/sessions/sess_x/end", json: "[1").body["error"]?["code"]?.stringValue == "invalid_json")
    }

    @Test(.timeLimit(.minutes(1))) func theLiveSessionsStreamSendsTheListAtOnceAndOnEveryChange() async throws {
        let server = try TestServer.start()
        do {
            try await Self.followLiveSessions(server)
        } catch {
            await server.stop()
            throw error
        }
    }

    /// The stream of `theLiveSessionsStreamSendsTheListAtOnceAndOnEveryChange`, then a shutdown
    /// that the open stream does not hold up.
    static func followLiveSessions(_ server: TestServer) async throws {
        func open(_ token: String) async throws -> HTTPClient.StreamingResponse {
            try await HTTPClient.shared.stream(HTTPClient.Request(
                url: server.baseURL.appendingPathComponent("/v1/console/sessions/events"), method: "GET", headers: ["Authorization": "Bearer \(token)"]
            ))
        }
        let refused = try await open(server.clientToken())
        #expect(refused.status == 403)
        let stream = try await open(ConsoleToken.mint(secret: server.secret).token)
        #expect(stream.status == 200 && stream.headers["content-type"] == "text/event-stream")
        var lists = sessionLists(stream.body).makeAsyncIterator()
        #expect(await lists.next()?.isEmpty == true, "the list comes at once")

        let (_, client) = try await RecordingTests.connect(server, agent: #"{"name":"Streamed"}"#)
        _ = await client.next("session.created")
        let joined = try #require(await lists.next())
        #expect(joined.count == 1 && joined.first?["state"]?.stringValue == "listening" && joined.first?["door"]?.stringValue == "websocket")
        let sessionID = try #require(joined.first?["id"]?.stringValue)

        try client.send(#"{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"tell me a long story"}]}}"#)
        try client.send(#"{"type":"response.create"}"#)
        var states: [String] = []
        while states.last != "speaking", let list = await lists.next() { states += list.compactMap { $0["state"]?.stringValue } }
        #expect(states.last == "speaking", "\(states)")
        #expect(try await server.request("POST", "/v1/console/sessions/\(sessionID)/end").status == 200)
        var left: [JSONValue]? = joined
        while left?.isEmpty == false { left = await lists.next() }
        #expect(left?.isEmpty == true, "the ended session stayed in the stream's list")

        let clock = ContinuousClock()
        let stopping = clock.now
        await server.stop()
        #expect(clock.now - stopping < .seconds(5), "the open stream held the shutdown up for \(clock.now - stopping)")
        #expect(await lists.next() == nil, "the stream outlived its server")
    }

    @Test func callsPageAndFilterAndBadParametersAreNamed() async throws {
        let server = try TestServer.start()
        defer { Task { await server.stop() } }
        let store = server.app.context.store
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        for index in 0..<250 {
            try await store.ensureConversation(id: "conv_\(index)", agentID: "agent_\(index % 3)")
            try await store.saveCall(CallRecord(
                id: String(format: "sess_%03d", index), conversationID: "conv_\(index)", userID: "user_\(index % 5)",
                door: index % 2 == 0 ? "webrtc" : "sip", nodeID: "local", startedAt: start.addingTimeInterval(Double(index)),
                endedAt: start.addingTimeInterval(Double(index) + 30), errorCount: index % 10 == 0 ? 2 : 0
            ))
        }
        var ids: [String] = []
        var cursor: String?
        repeat {
            let page = try await server.get("/v1/console/calls?limit=100" + (cursor.map { "&cursor=\($0)" } ?? ""))
            #expect(page.status == 200)
            ids += page.body["data"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
            cursor = page.body["next_cursor"]?.stringValue
        } while cursor != nil
        #expect(ids.count == 250 && ids.first == "sess_249" && ids.last == "sess_000")
        let filtered = try await server.get("/v1/console/calls?errors=true&door=webrtc&agent=agent_0&from=\(start.timeIntervalSince1970 + 100)")
        #expect(filtered.body["data"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["sess_240", "sess_210", "sess_180", "sess_150", "sess_120"])
        let searched = try await server.get("/v1/console/calls?search=user_3&limit=5")
        #expect(searched.body["data"]?.arrayValue?.allSatisfy { $0["user"]?.stringValue == "user_3" } == true)
        for (query, parameter) in [
            ("limit=0", "limit"), ("limit=abc", "limit"), ("cursor=%25%25", "cursor"), ("errors=maybe", "errors"),
            ("from=yesterday", "from"), ("min_duration=-1", "min_duration"), ("q=%25%25", "q"),
            ("q=" + Array(repeating: "word", count: 11).joined(separator: "+"), "q"),
        ] {
            let refused = try await server.get("/v1/console/calls?\(query)")
            #expect(refused.status == 400 && refused.body["error"]?["message"]?.stringValue?.contains(parameter) == true, "\(query)")
        }
        #expect(try await server.get("/v1/console/stats?bucket=10").status == 400)
        #expect(try await server.get("/v1/console/stats?from=2026-01-02&to=2026-01-01").status == 400)
    }

    @Test func statsGivePercentilesOfStoredFigures() async throws {
        let server = try TestServer.start()
        defer { Task { await server.stop() } }
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        for index in 0..<20 {
            try await server.app.context.store.saveTurnFigures(TurnFiguresRecord(
                responseID: "resp_\(index)", conversationID: "conv_1", sessionID: "sess_1",
                turnEndedAt: start.addingTimeInterval(Double(index * 360)), silenceWindowMs: 500, detectorWaitMs: 0,
                firstAudioMs: Double(100 * (index + 1)), status: "completed"
            ))
        }
        let stats = try await server.get("/v1/console/stats?from=\(Int(start.timeIntervalSince1970))&to=\(Int(start.timeIntervalSince1970) + 7200)&bucket=3600")
        #expect(stats.status == 200)
        // Voice to voice is the silence window and the first audio: 600 … 2,500 ms.
        #expect(stats.body["voice_to_voice"]?["p50"]?.doubleValue == 1_500 && stats.body["voice_to_voice"]?["p95"]?.doubleValue == 2_400)
        #expect(stats.body["first_audio"]?["count"]?.intValue == 20)
        let buckets = try #require(stats.body["buckets"]?.arrayValue)
        #expect(buckets.count == 2 && buckets[0]["voice_to_voice"]?["count"]?.intValue == 10)
    }

    /// Stores conversation `conv_handoff`: the caller asks the front desk about a bill, the desk
    /// hands the call to billing, whose first line opens with its filler.
    static func seedHandoff(_ server: TestServer) async throws -> (desk: String, billing: String) {
        let desk = try #require(try await server.request("POST", "/v1/agents", json: #"{"name":"Front desk"}"#).body["id"]?.stringValue)
        let billing = try #require(try await server.request(
            "POST", "/v1/agents", json: #"{"name":"Billing","filler_line":"One moment, please."}"#
        ).body["id"]?.stringValue)
        let store = server.app.context.store
        try await store.ensureConversation(id: "conv_handoff", agentID: desk)
        try await store.saveCall(CallRecord(
            id: "sess_handoff", conversationID: "conv_handoff", userID: "ada", door: "websocket", nodeID: "local", startedAt: Date()
        ))
        let transfer = ToolCall(id: "call_1", name: "transfer_to_billing", arguments: "{}")
        let messages: [(ChatMessage, String)] = [
            (.user("My bill is wrong"), desk), (.assistant(text: "", toolCalls: [transfer]), desk), (.tool(callID: "call_1", content: "handed off"), desk),
            (.assistant(text: "One moment, please. Your bill shows 5 euros."), billing), (.user("Thanks"), billing),
            (.assistant(text: "You are welcome."), billing),
        ]
        for (index, (message, agentID)) in messages.enumerated() {
            try await store.appendItem(ItemRecord(id: "item_\(index)", conversationID: "conv_handoff", message: message, createdAt: Date(), agentID: agentID))
        }
        return (desk, billing)
    }

    @Test func theConversationSaysWhichAgentSpokeWhereItWasHandedOffAndWhichLinesWereFillers() async throws {
        let server = try TestServer.start()
        defer { Task { await server.stop() } }
        let (desk, billing) = try await Self.seedHandoff(server)

        let items = try #require(try await server.request("GET", "/v1/console/conversations/conv_handoff").body["items"]?.arrayValue)
        #expect(items.count == 6)
        #expect(items.map { $0["agent_name"]?.stringValue } == ["Front desk", "Front desk", "Front desk", "Billing", "Billing", "Billing"])
        #expect(items.map { $0["handoff_from"]?.stringValue } == [nil, nil, nil, desk, nil, nil], "the handoff is marked once, where it happened")
        #expect(items[3]["handoff_from_name"]?.stringValue == "Front desk" && items[3]["agent_id"]?.stringValue == billing)
        #expect(items.map { $0["filler"]?.stringValue } == [nil, nil, nil, "One moment, please.", nil, nil])
        #expect(items[3]["text"]?.stringValue == "One moment, please. Your bill shows 5 euros.", "the stored text is left whole")
        // What was said finds the call.
        let found = try await server.get("/v1/console/calls?q=bill+EUROS")
        #expect(found.body["data"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["sess_handoff"])
        #expect(try await server.get("/v1/console/calls?q=bill+dollars").body["data"]?.arrayValue?.isEmpty == true)
    }

    @Test func agentsAreCreatedAndEditedWithTheirValidationErrors() async throws {
        let server = try TestServer.start()
        defer { Task { await server.stop() } }
        let token = ConsoleToken.mint(secret: server.secret).token
        let refused = try await server.request("POST", "/v1/console/agents", json: #"{"name":""}"#, token: token)
        #expect(refused.status == 400 && refused.body["error"]?["message"]?.stringValue?.isEmpty == false)
        let created = try await server.request("POST", "/v1/console/agents", json: #"{"name":"Front desk","instructions":"Greet."}"#, token: token)
        #expect(created.status == 201)
        let id = try #require(created.body["id"]?.stringValue)
        let edited = try await server.request("PATCH", "/v1/console/agents/\(id)", json: #"{"instructions":"Say goodbye."}"#, token: token)
        #expect(edited.status == 200 && edited.body["instructions"]?.stringValue == "Say goodbye.")
        let listed = try await server.request("GET", "/v1/console/agents", token: token)
        #expect(listed.body["data"]?.arrayValue?.map { $0["id"]?.stringValue } == [id])
    }
}

extension TestServer {
    /// `GET path` (with its query) with the server secret; the body parsed as JSON.
    func get(_ pathAndQuery: String) async throws -> (status: Int, body: JSONValue) {
        let url = try #require(URL(string: "http://127.0.0.1:\(port)\(pathAndQuery)"))
        let response = try await HTTPClient.shared.send(HTTPClient.Request(url: url, method: "GET", headers: ["Authorization": "Bearer \(secret)"]))
        return (response.status, (try? JSONDecoder().decode(JSONValue.self, from: response.body)) ?? .null)
    }
}

extension JSONValue {
    /// The elements, if this is an array.
    var arrayValue: [JSONValue]? { if case .array(let elements) = self { elements } else { nil } }
    /// The number, if this is one.
    var doubleValue: Double? { numberValue }
    /// The number as a whole number, if this is one.
    var intValue: Int? { numberValue.flatMap { $0 == $0.rounded() ? Int($0) : nil } }
    /// The element at `index`, if this is an array that long.
    subscript(index: Int) -> JSONValue? {
        guard let elements = arrayValue, elements.indices.contains(index) else { return nil }
        return elements[index]
    }
}

extension ConsoleAPITests {
    /// The session lists a `/v1/console/sessions/events` stream sends, one `sessions` event
    /// at a time; it ends with the stream.
    static func sessionLists(_ body: AsyncThrowingStream<Data, any Error>) -> AsyncStream<[JSONValue]> {
        AsyncStream { continuation in
            let reading = Task {
                var parser = ServerSentEventParser()
                do {
                    for try await piece in body {
                        for event in try parser.push(piece) where event.type == "sessions" {
                            continuation.yield((try? JSONValue(parsing: event.data))?["data"]?.arrayValue ?? [])
                        }
                    }
                } catch {}
                continuation.finish()
            }
            continuation.onTermination = { _ in reading.cancel() }
        }
    }
}
