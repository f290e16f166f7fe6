import BenchmarkHarness
import Foundation
import ParleyCore
import ParleyStore
import ParleyTesting

/// Cluster mode on a throwaway local PostgreSQL (loopback TCP, its defaults): two nodes, each
/// with a store and connection pool of its own and its own LISTEN connection, as two
/// `parley serve` processes would have.
///
/// - Cross-node command latency: from node B calling `send(.interrupt, …)` for an instance
///   node A owns (outbox row + `pg_notify` on A's channel) to B holding A's acknowledgement
///   (A took the row, ran its handler — which returns at once here — and notified B back).
/// - An item write through an instance claim (the epoch check locks the instance's row)
///   next to a plain one, one at a time.
/// - An admission under the cluster-wide session maximum (advisory lock, count, insert).
func runClusterBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    try await ThrowawayPostgres.with { server in
        let url = try await server.createDatabase()
        let storeA = try PostgresStore(url: url)
        let storeB = try PostgresStore(url: url)
        let a = PostgresCluster(store: storeA)
        let b = PostgresCluster(store: storeB)
        try await a.start(nodeURL: "http://127.0.0.2:8080") { _ in .done }
        try await b.start(nodeURL: "http://127.0.0.3:8080") { _ in .done }
        try await storeA.ensureConversation(id: "conv_bench", agentID: nil)
        try await storeA.saveInstance(InstanceRecord(id: "inst_bench", agentID: "agent", userID: "user", conversationID: "conv_bench", status: "waiting", createdAt: Date()))
        guard let claim = try await a.claim(instanceID: "inst_bench") else { throw ClusterBenchmarkFailure(description: "the instance could not be claimed") }

        let clock = ContinuousClock()
        func milliseconds(_ body: () async throws -> Void) async rethrows -> Double {
            let start = clock.now
            try await body()
            return ((clock.now - start) / .seconds(1)) * 1000
        }
        var results: [BenchmarkResult] = []

        let commands = quick ? 100 : 1_000
        for _ in 0..<10 { _ = try await b.send(.interrupt, instanceID: claim.instanceID, epoch: claim.epoch, to: a.nodeID) }  // warm-up
        var latencies: [Double] = []
        for _ in 0..<commands {
            latencies.append(try await milliseconds {
                guard try await b.send(.interrupt, instanceID: claim.instanceID, epoch: claim.epoch, to: a.nodeID) == .done else {
                    throw ClusterBenchmarkFailure(description: "the owner did not carry out the command")
                }
            })
        }
        let p99 = percentile(latencies, 99)
        results.append(BenchmarkResult(area: "cluster", name: "cross-node command on loopback PostgreSQL (B sends interrupt: outbox row + pg_notify → A's handler, which returns at once → A's acknowledgement back at B), p50, \(commands) sequential", value: percentile(latencies, 50), unit: "ms", target: "", meetsTarget: nil))
        results.append(BenchmarkResult(area: "cluster", name: "cross-node command on loopback PostgreSQL (B sends interrupt: outbox row + pg_notify → A's handler, which returns at once → A's acknowledgement back at B), p99, \(commands) sequential", value: p99, unit: "ms", target: "<= 20 ms", meetsTarget: p99 <= 20))

        let writes = quick ? 200 : 2_000
        let message = ChatMessage.assistant(text: String(repeating: "A sentence of a spoken reply, as heard. ", count: 5), toolCalls: [], interrupted: false)
        let claimed = a.store(for: claim)
        var fenced: [Double] = []
        var plain: [Double] = []
        for index in 0..<writes {
            fenced.append(try await milliseconds {
                try await claimed.appendItem(ItemRecord(id: "item_fenced_\(index)", conversationID: "conv_bench", message: message, createdAt: Date()))
            })
            plain.append(try await milliseconds {
                try await storeA.appendItem(ItemRecord(id: "item_plain_\(index)", conversationID: "conv_bench", message: message, createdAt: Date()))
            })
        }
        results.append(BenchmarkResult(area: "cluster", name: "item write through an instance claim (epoch checked; PostgreSQL defaults: fsync at every commit), p50, \(writes) one at a time", value: percentile(fenced, 50), unit: "ms", target: "", meetsTarget: nil))
        results.append(BenchmarkResult(area: "cluster", name: "item write without a claim (same conversation; PostgreSQL defaults: fsync at every commit), p50, \(writes) one at a time", value: percentile(plain, 50), unit: "ms", target: "", meetsTarget: nil))

        let admissions = quick ? 100 : 1_000
        var admitting: [Double] = []
        for index in 0..<admissions {
            admitting.append(try await milliseconds {
                _ = try await (index.isMultiple(of: 2) ? a : b).admitSession(
                    id: "sess_\(index)", instanceID: nil, owner: SessionOwner(user: "user_\(index % 50)", tokenID: "tok_\(index)"),
                    limits: ClusterSessionLimits(maximum: 1_000_000, perUser: 1_000, perToken: 5)
                )
            })
        }
        results.append(BenchmarkResult(area: "cluster", name: "session admission under the cluster maximum and per-user and per-token limits (advisory lock, counts, insert; 50 users), p50, \(admissions) sessions running at most", value: percentile(admitting, 50), unit: "ms", target: "", meetsTarget: nil))

        await a.stop()
        await b.stop()
        await storeA.close()
        await storeB.close()
        return results
    }
}

private struct ClusterBenchmarkFailure: Error, CustomStringConvertible {
    var description: String
}
