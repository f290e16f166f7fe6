import BenchmarkHarness
import Foundation
import ParleyStore
import ParleyTesting

/// The capacity of two cluster nodes against one, on the same machine (issue 25): the
/// `server` area's defaults profile (Silero VAD, 300 ms silence, preemption on, flite's spoken
/// question, the fake upstream as slow as a hosted stack) and its C load client, which spreads the
/// sessions round-robin over the nodes as a load balancer would. Each node is a
/// `ParleyBenchmarks serve` process in cluster mode on one throwaway PostgreSQL: every session
/// joins an instance of its own (a claim, epoch-checked item writes, the cluster-wide admission
/// count), so the database carries what a deployment's would.
///
/// For each node count the session count is searched by the rule every capacity figure uses
/// (`CapacitySearch`): the largest count that held and the smallest that failed. A count holds
/// when every session connected, every turn was answered and the p99 from the chunk holding the
/// question's last voiced sample being sent to the first audio delta received is within the
/// profile's limit (`DefaultsLatencyBound`).
/// Every trial starts fresh node processes (warmed up by one unmeasured turn each) and fresh instances.
///
/// The machine has 2 cores that the nodes, PostgreSQL, the fake upstream and the load client
/// all share: a second node adds no CPU, so it cannot add capacity here; the figures show what
/// the split costs (CPU and memory per session, PostgreSQL's share), not a scale-out.
func runClusterCapacityBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    let profile = try await ServerLoadProfile.defaults(quick: quick)
    let turns = quick ? 1 : 2
    return try await ThrowawayPostgres.with { server in
        let url = try await server.createDatabase()
        let database = try ClusterDatabaseFigures(url: url)
        var results: [BenchmarkResult] = []
        var oneNodeHeld: Int?
        for nodes in [1, 2] {
            let trials = ClusterCapacityTrials(nodes: nodes, turns: turns, profile: profile, databaseURL: url, database: database)
            // Two nodes start where one stopped: on 2 cores they hold about as many.
            let search = CapacitySearch(
                ladder: [max(oneNodeHeld ?? (quick ? 150 : 300), 1)], ceiling: quick ? 600 : 2_400, precision: quick ? 0.5 : 0.1)
            let bracket = try await search.run(trial: { try await trials.measure(sessions: $0) }, holds: \.held)
            results += trials.results(bracket)
            let held = bracket.held?.count ?? 0
            if nodes == 1 {
                oneNodeHeld = held
            } else if let oneNodeHeld, oneNodeHeld > 0 {
                results.append(capacityResult(
                    "largest count held by 2 nodes / by 1 node, same 2-core machine (the nodes share its CPUs: no capacity is added)",
                    Double(held) / Double(oneNodeHeld), "times", ""))
            }
        }
        await database.close()
        return results
    }
}

/// The trials of one node count's capacity search.
private final class ClusterCapacityTrials {
    /// One run at one session count.
    struct Probe {
        var sessions: Int
        var outcome: ServerLoad.Outcome
        var p50: Double
        var p99: Double
        var held: Bool
        var databaseCPUSeconds: Double
        var databaseTransactions: Double
    }

    let nodes: Int
    let turns: Int
    let profile: ServerLoadProfile
    let databaseURL: String
    let database: ClusterDatabaseFigures
    private var instanceBatch = 0

    init(nodes: Int, turns: Int, profile: ServerLoadProfile, databaseURL: String, database: ClusterDatabaseFigures) {
        self.nodes = nodes
        self.turns = turns
        self.profile = profile
        self.databaseURL = databaseURL
        self.database = database
    }

    /// One fresh run at `sessions`, each session on an instance of its own.
    func measure(sessions: Int) async throws -> Probe {
        instanceBatch += 1
        let prefix = "inst_n\(nodes)_p\(instanceBatch)_"
        try await database.createInstances(prefix: prefix, count: sessions)
        let topology = ServerTopology(nodeCount: nodes, databaseURL: databaseURL, path: "/v1/realtime?instance=\(prefix)%d")
        let cpuBefore = try await database.cpuSeconds()
        let transactionsBefore = try await database.transactions()
        let outcome = try await ServerLoad(sessions: sessions, turnsPerSession: turns, profile: profile, topology: topology).run()
        let cpu = try await database.cpuSeconds() - cpuBefore
        let transactions = try await database.transactions() - transactionsBefore
        let latencies = outcome.turns.map(\.latencyMs)
        let p99 = percentile(latencies, 99)
        let held = outcome.connected == sessions && latencies.count == sessions * turns && p99 <= profile.p99LimitMs
        FileHandle.standardError.write(Data(
            "cluster-capacity: \(nodes) node(s), \(sessions) sessions: \(latencies.count) of \(sessions * turns) turns, p99 \(Int(p99)) ms -> \(held ? "held" : "failed")\n".utf8))
        return Probe(
            sessions: sessions, outcome: outcome, p50: percentile(latencies, 50), p99: p99, held: held,
            databaseCPUSeconds: cpu, databaseTransactions: transactions
        )
    }

    /// The figures of the search: every trial's verdict, the bracket, and the costs at the largest count held.
    func results(_ bracket: CapacityBracket<Probe>) -> [BenchmarkResult] {
        let nodesText = nodes == 1 ? "1 node" : "\(nodes) nodes"
        let latency = "last voiced chunk sent -> first audio delta received"
        var results = bracket.runs.enumerated().map { index, run in
            capacityResult(
                "\(nodesText), trial \(index + 1), \(run.count) sessions\(nodes == 1 ? "" : " round-robin"): \(latency), p99 / turns answered of \(run.count * turns)",
                run.figures.p99, "ms", "", detail: Double(run.figures.outcome.turns.count), detailUnit: run.held ? "answered (held)" : "answered (failed)")
        }
        results.append(.capacity(
            area: "cluster-capacity",
            name: "\(nodesText) on one PostgreSQL, defaults profile: concurrent sessions (every turn of \(turns) answered, \(profile.p99LimitText), timed \(latency))",
            bracket: bracket, noun: "sessions"))
        guard let probe = bracket.held?.figures else { return results }
        let outcome = probe.outcome
        let at = "\(nodesText), \(probe.sessions) sessions"
        let sessionSeconds = max(outcome.sessionSeconds, 0.001)
        results.append(capacityResult("\(at): \(latency), p50 / p99", probe.p50, "ms", "", detail: probe.p99, detailUnit: "ms p99"))
        results.append(capacityResult("\(at): nodes' CPU (together) per session-second", outcome.serverCPUMillisecondsPerSessionSecond, "ms/s", ""))
        results.append(capacityResult(
            "\(at): PostgreSQL CPU (every server process, connect to last close) per session-second", probe.databaseCPUSeconds * 1000 / sessionSeconds, "ms/s", ""))
        results.append(capacityResult(
            "\(at): PostgreSQL transactions (committed + rolled back, connect to last close) per session-second",
            probe.databaseTransactions / sessionSeconds, "tx/s", ""))
        results.append(capacityResult(
            "\(at): nodes' memory (together) per idle / per active session", outcome.idleBytesPerSession / 1024, "KiB", "",
            detail: outcome.activeBytesPerSession / 1024, detailUnit: "KiB active"))
        results.append(capacityResult(
            "\(at): nodes' CPU used / waited for (run queue), together", outcome.serverCores, "cores", "",
            detail: outcome.serverWaitingCores, detailUnit: "cores waiting"))
        results.append(capacityResult(
            "\(at): load client / fake upstream CPU per session-second", outcome.clientCPUMillisecondsPerSessionSecond, "ms/s", "",
            detail: outcome.upstreamCPUMillisecondsPerSessionSecond, detailUnit: "ms/s upstream"))
        results.append(capacityResult(
            "\(at): host slow stretches during the run, share of the time / worst slowdown", outcome.hostSlowdowns.slowPercent, "%", "",
            detail: outcome.hostSlowdowns.worstRatio, detailUnit: "times slower"))
        return results
    }
}

/// What the benchmark reads from the shared PostgreSQL, through `psql`: the instances it
/// creates, the CPU time of the server's processes (from `/proc`, the postmaster and its
/// children) and the database's transaction count.
private final class ClusterDatabaseFigures: Sendable {
    private let url: String
    private let store: PostgresStore
    private let psql = URL(fileURLWithPath: (ProcessInfo.processInfo.environment["PARLEY_POSTGRES_BIN"] ?? "/usr/lib/postgresql/15/bin") + "/psql")

    init(url: String) throws {
        self.url = url
        store = try PostgresStore(url: url)
    }

    func close() async { await store.close() }

    /// Instances `prefix0` … `prefix(count-1)`, waiting for their first connection.
    func createInstances(prefix: String, count: Int) async throws {
        for index in 0..<count {
            let id = "\(prefix)\(index)"
            try await store.ensureConversation(id: "conv_\(id)", agentID: nil)
            try await store.saveInstance(InstanceRecord(
                id: id, agentID: "agent_bench", userID: "user_\(index)", conversationID: "conv_\(id)", status: "waiting", createdAt: Date()))
        }
    }

    private func query(_ sql: String) async throws -> String {
        try await runProcess(psql, ["-tAqX", "-c", sql, url]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// CPU seconds the PostgreSQL server has used: the postmaster, its children that ended
    /// (reaped: counted in its own figures) and those running now.
    func cpuSeconds() async throws -> Double {
        let directory = try await query("SHOW data_directory")
        guard let text = try? String(contentsOfFile: directory + "/postmaster.pid", encoding: .utf8),
              let postmaster = text.split(separator: "\n").first.flatMap({ Int32($0) }) else {
            throw BenchmarkToolError("cannot read PostgreSQL's postmaster.pid in \(directory)")
        }
        let children = ProcessFigures.childProcessIDs(of: postmaster)
        return (ProcessFigures.cpuSeconds(pid: postmaster, includingReapedChildren: true) ?? 0)
            + children.reduce(0) { $0 + (ProcessFigures.cpuSeconds(pid: $1) ?? 0) }
    }

    /// Transactions committed and rolled back in the database so far (PostgreSQL's statistics,
    /// which backends report within a second; the count is read after that second).
    func transactions() async throws -> Double {
        try await Task.sleep(for: .milliseconds(1_200))
        return Double(try await query("SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()")) ?? 0
    }
}

private func capacityResult(
    _ name: String, _ value: Double, _ unit: String, _ target: String, meets: Bool? = nil, detail: Double? = nil, detailUnit: String? = nil
) -> BenchmarkResult {
    let unitText = detail.map { String(format: "/ %.2f %@", $0, detailUnit ?? unit) } ?? unit
    return BenchmarkResult(area: "cluster-capacity", name: name, value: value, unit: unitText, target: target, meetsTarget: meets)
}
