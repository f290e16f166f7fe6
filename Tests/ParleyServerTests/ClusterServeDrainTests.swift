import Foundation
import ParleyCore
import ParleyNet
import ParleyTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Graceful shutdown and status in the three-node cluster, behind HAProxy running the sample
/// configuration.
extension ClusterServeTests {
    /// One row of the `nodes` table, read with `psql`: `draining|dead` (`t` or `f` each).
    static func nodeFlags(databaseURL: String, nodeURL: String) async throws -> String {
        let result = try await ChildProcess.run(
            "/usr/lib/postgresql/15/bin/psql", ["-tAqX", "-c", "SELECT draining, dead FROM nodes WHERE url = '\(nodeURL)'", databaseURL]
        )
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The instance as `node` shows it.
    static func shown(_ node: ServerProcess, _ instance: String) async throws -> JSONValue {
        try await call(node, "GET", "/v1/instances/\(instance)").body
    }

    @Test("SIGTERM drains B: heartbeat and /readyz say draining (/healthz stays 200), HAProxy takes B out, new sessions on every door refused by B and landing on A or C, B's live session finishes its turn, then moves")
    func drainingNodeHandsItsSessionsOver() async throws {
        try await ThrowawayPostgres.with { postgres in
            let databaseURL = try await postgres.createDatabase()
            let cluster = try await LocalCluster.start(databaseURL: databaseURL, settings: [
                "PARLEY_DRAIN_SECONDS": "15", "PARLEY_TWILIO_AUTH_TOKEN": TestServer.twilioAuthToken,
            ])
            let balancer: HAProxyProcess
            do {
                balancer = try await HAProxyProcess(nodes: cluster.nodes, directory: cluster.root)
            } catch {
                await cluster.stop()
                throw error
            }
            do {
                let bURL = "http://127.0.0.3:\(cluster.b.port)"
                let (instance, conversation) = try await cluster.instance(via: cluster.a)
                let onB = try await Self.connect(cluster.b, instance: instance)
                #expect(try await onB.turn("before the drain").status == "completed")
                #expect(try await Self.nodeFlags(databaseURL: databaseURL, nodeURL: bURL) == "f|f")

                kill(cluster.b.pid, SIGTERM)
                let readinessDraining = await ResourceProbe.eventually(within: 20) {
                    let readiness = try? await Self.call(cluster.b, "GET", "/readyz")
                    return readiness?.status == 503 && readiness?.body["error"]?["code"]?.stringValue == "draining"
                }
                #expect(readinessDraining, "B's /readyz did not report draining")
                #expect(try await Self.call(cluster.b, "GET", "/healthz").status == 200, "B's liveness failed while it drained")
                // Sessions that reach HAProxy before its check has taken B out (it checks every 2 s)
                // still start: B refuses the upgrade with 503 and HAProxy retries it on A or C.
                var early: [ProcessRealtimeClient] = []
                for _ in 0..<4 {
                    let client = try await ProcessRealtimeClient.connect(port: balancer.port, host: balancer.host)
                    #expect(await client.next("session.created") != nil)
                    early.append(client)
                }
                early.forEach { $0.close() }
                let rowDraining = await ResourceProbe.eventually(within: 10) {
                    (try? await Self.nodeFlags(databaseURL: databaseURL, nodeURL: bURL)) == "t|f"
                }
                #expect(rowDraining, "B's row in the nodes table does not say draining")
                // B's live session goes on while B drains: a whole turn, its status shown by every node.
                #expect(try await onB.turn("during the drain").status == "completed")
                for node in [cluster.a, cluster.c] {
                    let shown = try await Self.shown(node, instance)
                    #expect(shown["status"]?.stringValue == "listening" && shown["owner_url"]?.stringValue == bURL, "\(shown)")
                }

                let takenOut = await ResourceProbe.eventually(within: 20) { balancer.log.contains("parley_nodes/b is DOWN") }
                #expect(takenOut, "HAProxy's health check did not take B out: \(balancer.log.suffix(1_000))")

                // New sessions: refused by B itself, with a clear error; through HAProxy they land elsewhere.
                await #expect(throws: (any Error).self) { try await ProcessRealtimeClient.connect(port: cluster.b.port, host: cluster.b.host) }
                let call = try await HTTPClient.shared.send(HTTPClient.Request(
                    url: cluster.b.baseURL.appendingPathComponent("/v1/realtime/calls"), method: "POST",
                    headers: ["Authorization": "Bearer \(ServerProcess.secret)", "Content-Type": "application/sdp"], body: Data("v=0\r\n".utf8)
                ))
                let refusal = (try? JSONDecoder().decode(JSONValue.self, from: call.body)) ?? .null
                #expect(call.status == 503 && refusal["error"]?["code"]?.stringValue == "node_draining", "\(call.status) \(refusal)")
                let phone = try await TwilioTestCall.answer(baseURL: cluster.b.baseURL, form: TwilioTestCall.callForm(callSID: "CAdraining0001"))
                #expect(phone.status == 200 && phone.streamURL == nil && phone.body.contains("<Hangup/>"), "a phone call reached the draining node: \(phone.body)")
                let other = try await cluster.instance(via: cluster.a)
                let throughBalancer = try await ProcessRealtimeClient.connect(port: balancer.port, query: "?instance=\(other.id)", host: balancer.host)
                #expect(await throughBalancer.next("session.created") != nil)
                let ownerOfNew = try await Self.shown(cluster.c, other.id)["owner_url"]?.stringValue
                #expect(ownerOfNew != nil && ownerOfNew != bURL, "a new session landed on the draining node")
                throughBalancer.close()

                // The drain period over, B closes the session and exits; the instance waits for its client.
                #expect(await Self.closes(onB), "B kept its session open after the drain period")
                #expect(await cluster.b.exitStatus() == 0)
                let waiting = try await Self.shown(cluster.a, instance)
                #expect(waiting["status"]?.stringValue == "waiting" && waiting["owner_node"] == nil, "\(waiting)")
                #expect(try await Self.nodeFlags(databaseURL: databaseURL, nodeURL: bURL) == "t|t")

                // The client reconnects through HAProxy and the conversation goes on where it was.
                let moved = try await ProcessRealtimeClient.connect(port: balancer.port, query: "?instance=\(instance)", host: balancer.host)
                #expect(try await moved.turn("after the move").status == "completed")
                let owner = try await Self.shown(cluster.a, instance)["owner_url"]?.stringValue
                #expect(owner != nil && owner != bURL)
                let items = try await Self.call(cluster.c, "GET", "/v1/conversations/\(conversation)/items").body["data"]?.arrayElements ?? []
                let userTexts = items.compactMap { $0["role"]?.stringValue == "user" ? $0["text"]?.stringValue : nil }
                #expect(userTexts == ["before the drain", "during the drain", "after the move"], "\(userTexts)")
                #expect(items.filter { $0["role"]?.stringValue == "assistant" }.count == 3)
                moved.close()
            } catch {
                balancer.stop()
                await cluster.stop()
                throw error
            }
            balancer.stop()
            await cluster.stop()
        }
    }

    @Test("every node shows the live session's status as it changes (listening, speaking, listening), then waiting and ended")
    func everyNodeShowsTheStatus() async throws {
        try await ThrowawayPostgres.with { postgres in
            let cluster = try await LocalCluster.start(databaseURL: try await postgres.createDatabase())
            do {
                let (instance, _) = try await cluster.instance(via: cluster.a)
                func statuses() async throws -> [String?] {
                    var seen: [String?] = []
                    for node in cluster.nodes { seen.append(try await Self.shown(node, instance)["status"]?.stringValue) }
                    return seen
                }
                #expect(try await statuses() == ["waiting", "waiting", "waiting"])

                let onB = try await Self.connect(cluster.b, instance: instance)
                _ = await onB.next("session.created")
                #expect(try await statuses() == ["listening", "listening", "listening"])

                // A reply that keeps speaking (its audio trickles in): every node says so.
                try cluster.upstreams.speech.set(.trickleAfterFirstOutput)
                try Self.startTurn(onB, "tell me a long story")
                #expect(await onB.next("response.output_audio.delta") != nil)
                #expect(try await statuses() == ["speaking", "speaking", "speaking"])
                #expect(try await Self.call(cluster.c, "POST", "/v1/instances/\(instance)/interrupt").status == 200)
                #expect(await onB.next("response.done", seconds: 10) != nil)
                try cluster.upstreams.speech.set(.healthy)
                #expect(try await statuses() == ["listening", "listening", "listening"])

                onB.close()
                let released = await ResourceProbe.eventually(within: 20) { (try? await statuses()) == ["waiting", "waiting", "waiting"] }
                let afterLeaving = try await statuses()
                #expect(released, "after the client left: \(afterLeaving)")
                #expect(try await Self.call(cluster.a, "DELETE", "/v1/instances/\(instance)").status == 200)
                #expect(try await statuses() == ["ended", "ended", "ended"])
            } catch {
                await cluster.stop()
                throw error
            }
            await cluster.stop()
        }
    }
}
