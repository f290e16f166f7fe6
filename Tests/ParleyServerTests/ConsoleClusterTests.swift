import Foundation
import ParleyCore
import ParleyNet
@testable import ParleyServer
import ParleyTesting
import Testing

/// The operator console through any node of a cluster: two real servers on one real
/// PostgreSQL, a call on node B seen through node A with what it is doing, and interrupted and
/// ended through A.
@Suite struct ConsoleClusterTests {
    /// Two servers sharing the database at `databaseURL`, both joined to the cluster.
    static func twoNodes(databaseURL: String) async throws -> (a: TestServer, b: TestServer) {
        let a = try TestServer.start { $0.databaseURL = databaseURL }
        try await a.app.joinCluster()
        let b = try TestServer.start { $0.databaseURL = databaseURL }
        try await b.app.joinCluster()
        return (a, b)
    }

    /// The session `id` as node `server`'s console lists it, once `condition` holds for it.
    static func listed(
        _ id: String, on server: TestServer, where condition: @escaping @Sendable (JSONValue) -> Bool = { _ in true }
    ) async -> JSONValue? {
        var found: JSONValue?
        _ = await ResourceProbe.eventually(within: 15) {
            let sessions = (try? await server.request("GET", "/v1/console/sessions").body["data"]?.arrayValue) ?? []
            found = sessions.first { $0["id"]?.stringValue == id }
            return found.map(condition) ?? false
        }
        return found
    }

    @Test func aSessionOnNodeBShowsThroughNodeAWithItsStateAndObeysA() async throws {
        try await ThrowawayPostgres.with { postgres in
            let (a, b) = try await Self.twoNodes(databaseURL: try await postgres.createDatabase())
            do {
                let (conversationID, client) = try await RecordingTests.connect(b, agent: #"{"name":"Clustered"}"#)
                _ = await client.next("session.created")
                let sessionID = try #require(try await b.request("GET", "/v1/console/sessions").body["data"]?[0]?["id"]?.stringValue)
                let nodeB = b.app.context.coordinator.nodeID

                let between = try #require(await Self.listed(sessionID, on: a) { $0["state"]?.stringValue == "listening" })
                #expect(between["node"]?.stringValue == nodeB && between["door"]?.stringValue == "websocket")
                #expect(between["conversation_id"]?.stringValue == conversationID && between["agent_id"]?.stringValue?.hasPrefix("agent_") == true)

                // A reply that keeps speaking for seconds: A sees B's session speak.
                try client.send(#"{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"tell me a long story"}]}}"#)
                try client.send(#"{"type":"response.create"}"#)
                #expect(await client.next("response.output_audio.delta") != nil)
                let speaking = await Self.listed(sessionID, on: a) { $0["state"]?.stringValue == "speaking" }
                #expect(speaking?["state"]?.stringValue == "speaking", "\(speaking?.jsonText ?? "not listed")")

                let interrupted = try await a.request("POST", "/v1/console/sessions/\(sessionID)/interrupt", json: #"{"node":"\#(nodeB)"}"#)
                #expect(interrupted.status == 200 && interrupted.body["node"]?.stringValue == nodeB, "\(interrupted.body)")
                let done = await client.next("response.done")
                #expect(done?["response"]?["status"]?.stringValue == "cancelled")
                #expect(await Self.listed(sessionID, on: a) { $0["state"]?.stringValue == "listening" } != nil)

                let ended = try await a.request("POST", "/v1/console/sessions/\(sessionID)/end", json: #"{"node":"\#(nodeB)"}"#)
                #expect(ended.status == 200 && ended.body["object"]?.stringValue == "console.session.ended")
                #expect(await client.closes(within: 10))
                #expect(await ResourceProbe.eventually(within: 15) {
                    let sessions = (try? await a.request("GET", "/v1/console/sessions").body["data"]?.arrayValue) ?? [.null]
                    return !sessions.contains { $0["id"]?.stringValue == sessionID }
                }, "the ended session stayed listed on A")
            } catch {
                await a.stop()
                await b.stop()
                throw error
            }
            await a.stop()
            await b.stop()
        }
    }
}
