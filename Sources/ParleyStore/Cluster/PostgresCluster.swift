import Foundation

/// This node's part in a cluster of Parley nodes sharing one PostgreSQL: it registers the
/// node and keeps its heartbeat (every 2 s), claims the instances whose sockets land here,
/// carries commands to the node that owns an instance (an outbox row plus `pg_notify` on
/// that node's channel, answered by an acknowledgement the same way), holds the cluster-wide
/// session maximum and token bucket, and — one node at a time, under an advisory lock —
/// declares nodes silent for 10 s dead and their instances `lost`.
///
/// Every call runs on the store's connection pool, except LISTEN, which has a connection of
/// its own (`PostgresNotificationListener`). Times are the database's clock, so the nodes'
/// clocks need not agree.
///
/// ```swift
/// let cluster = PostgresCluster(store: store)
/// try await cluster.start(nodeURL: "http://10.0.0.5:8080") { command in await sessions.carryOut(command) }
/// if let claim = try await cluster.claim(instanceID: "inst_1") { … }
/// ```
///
/// `@unchecked Sendable`: `waiters`, `handler`, `heartbeat` and `isDraining` are guarded by `lock`.
public final class PostgresCluster: @unchecked Sendable {
    /// This node's id (also its NOTIFY channel's suffix).
    public let nodeID: String
    private let store: PostgresStore
    private var pool: PostgresConnectionPool { store.pool }
    private let lock = NSLock()
    private var waiters: [String: CheckedContinuation<String, any Error>] = [:]
    private var handler: (@Sendable (ClusterCommand) async -> ClusterCommandOutcome)?
    private var heartbeat: Task<Void, Never>?
    private var draining = false
    private var listener: PostgresNotificationListener?
    private var onDeclaredDead: (@Sendable () async -> Void)?

    /// How often the node beats and the sweeper looks.
    public static let heartbeatInterval = Duration.seconds(2)
    /// How long a node may stay silent before the sweeper declares it dead, in seconds.
    public static let silenceBeforeDeath = 10.0
    /// How long a sender waits for an owner's acknowledgement.
    public static let acknowledgementTimeout = Duration.seconds(5)

    /// Advisory lock keys ("parley" + a letter in ASCII): one sweeper at a time, one admission at a time.
    static let sweeperLock: Int64 = 0x70_61_72_6C_65_79_73
    static let admissionLock: Int64 = 0x70_61_72_6C_65_79_61

    /// Prepares this node on the PostgreSQL store whose connections it shares; nothing is
    /// written until `start`.
    public init(store: PostgresStore) {
        self.store = store
        nodeID = "node_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
    }

    /// The NOTIFY channel of a node.
    static func channel(of node: String) -> String { "parley_" + node }

    /// Registers the node, starts listening for its commands and starts the heartbeat and sweeper.
    /// - Parameters:
    ///   - nodeURL: the URL this node is reached at inside the cluster.
    ///   - handler: carries out a command for an instance this node owns.
    /// - Throws: `PostgresError` when the node cannot be registered.
    ///   - onDeclaredDead: called when the node finds it was declared dead while it was silent
    ///     (paused, or cut off from the database): its instances were taken from it, so it ends
    ///     its sessions before it registers again.
    public func start(
        nodeURL: String, handler: @escaping @Sendable (ClusterCommand) async -> ClusterCommandOutcome,
        onDeclaredDead: @escaping @Sendable () async -> Void = {}
    ) async throws {
        try await register(nodeURL: nodeURL)
        let listener = PostgresNotificationListener(
            url: store.url, channel: Self.channel(of: nodeID),
            onNotification: { [weak self] payload in self?.received(payload) },
            onListening: { [weak self] in
                guard let self else { return }
                Task { await self.catchUp() }
            }
        )
        let beating = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.heartbeatInterval)
                guard let self else { return }
                await self.beat()
            }
        }
        lock.withLock {
            self.handler = handler
            self.listener = listener
            self.onDeclaredDead = onDeclaredDead
            heartbeat = beating
        }
        listener.start()
    }

    /// Writes the node's row, with its first heartbeat.
    func register(nodeURL: String) async throws {
        let parameters = [nodeID, nodeURL]
        try await pool.run { connection in
            try connection.query(
                "INSERT INTO nodes(id, url, started_at, heartbeat_at) VALUES($1, $2, \(Self.now), \(Self.now))", parameters
            )
        }
    }

    /// Marks the node draining: a load balancer's health check sees it and sends no new clients.
    public func drain() async {
        lock.withLock { draining = true }
        let node = nodeID
        _ = try? await pool.run { connection in try connection.query("UPDATE nodes SET draining = true WHERE id = $1", [node]) }
    }

    /// Whether the node is draining (shutting down).
    public var isDraining: Bool { lock.withLock { draining } }

    /// Leaves the cluster: stops the heartbeat and the listener, lets go of the instances this
    /// node still holds (they wait for their clients to reconnect through another node; a
    /// session that is still ending writes nothing after the store closes) and marks the node gone.
    public func stop() async {
        let (beating, listener, pending) = lock.withLock { () -> (Task<Void, Never>?, PostgresNotificationListener?, [CheckedContinuation<String, any Error>]) in
            defer { waiters = [:]; heartbeat = nil; self.listener = nil }
            return (heartbeat, self.listener, Array(waiters.values))
        }
        beating?.cancel()
        listener?.stop()
        pending.forEach { $0.resume(throwing: ClusterError(code: .stopped, message: "The node is shutting down.")) }
        let node = nodeID
        _ = try? await pool.run { connection in
            try connection.transaction {
                try connection.query("UPDATE instances SET status = 'waiting', owner_node = NULL WHERE owner_node = $1 AND status = 'live'", [node])
                try connection.query("DELETE FROM live_sessions WHERE node_id = $1", [node])
                try connection.query("UPDATE nodes SET dead = true, draining = true WHERE id = $1", [node])
            }
        }
    }

    // MARK: Ownership

    /// Claims an instance for a session on this node: status `live`, this node the owner,
    /// the epoch raised by one.
    /// - Returns: the claim (with the previous owner, which must now let go), or `nil` when
    ///   there is no such instance or it has ended.
    public func claim(instanceID: String) async throws -> InstanceClaim? {
        let parameters = [instanceID, nodeID]
        return try await pool.run { connection in
            try connection.query(
                "WITH previous AS (SELECT id, owner_node, status FROM instances WHERE id = $1 AND status <> 'ended' FOR UPDATE) "
                    + "UPDATE instances SET status = 'live', owner_node = $2, epoch = instances.epoch + 1 FROM previous "
                    + "WHERE instances.id = previous.id RETURNING instances.epoch, previous.owner_node, previous.status",
                parameters
            ).rows.first.map { row in
                InstanceClaim(instanceID: instanceID, epoch: Int64(row[0] ?? "") ?? 0, previousOwner: row[2] == "live" ? row[1] : nil)
            }
        }
    }

    /// Lets go of a claim when its session ends: the instance waits for its next connection,
    /// unless a newer claim or an end came first.
    public func release(_ claim: InstanceClaim) async {
        let parameters = [claim.instanceID, String(claim.epoch)]
        _ = try? await pool.run { connection in
            try connection.query(
                "UPDATE instances SET status = 'waiting', owner_node = NULL WHERE id = $1 AND epoch = $2 AND status = 'live'", parameters
            )
        }
    }

    /// Ends an instance: status `ended`, no owner.
    /// - Parameter fencingOwner: also raise the epoch, so an owner that did not answer (and
    ///   may still serve the instance) can write nothing more. An owner that closed the
    ///   session itself still stores its last items.
    public func end(instanceID: String, fencingOwner: Bool) async throws {
        let fence = fencingOwner ? ", epoch = epoch + 1" : ""
        try await pool.run { connection in
            try connection.query("UPDATE instances SET status = 'ended', owner_node = NULL\(fence) WHERE id = $1", [instanceID])
        }
    }

    /// The instance's status, owner and epoch; `nil` when there is no such instance.
    public func ownership(instanceID: String) async throws -> InstanceOwnership? {
        try await pool.run { connection in
            try connection.query(
                "SELECT i.status, i.owner_node, n.url, i.epoch FROM instances i LEFT JOIN nodes n ON n.id = i.owner_node WHERE i.id = $1",
                [instanceID]
            ).rows.first.map { row in
                InstanceOwnership(status: row[0] ?? "ended", ownerNode: row[1], ownerURL: row[2], epoch: Int64(row[3] ?? "") ?? 0)
            }
        }
    }

    /// The store a session holding `claim` writes its items through: the same store, with
    /// item writes refused (`ClusterError.staleOwner`) once a newer claim exists.
    public func store(for claim: InstanceClaim) -> any ParleyStore {
        ClaimedInstanceStore(store: store, claim: claim)
    }

    // MARK: Commands

    /// Has the node that owns the instance carry out a command and waits for its acknowledgement.
    /// A command for this node is carried out at once, without the database.
    /// - Parameter timeout: how long to wait for the acknowledgement.
    /// - Returns: the owner's outcome.
    /// - Throws: `ClusterError.ownerUnreachable` when no acknowledgement came within
    ///   `timeout`, or a `PostgresError`.
    public func send(
        _ kind: ClusterCommand.Kind, instanceID: String, epoch: Int64, to node: String, timeout: Duration = acknowledgementTimeout
    ) async throws -> ClusterCommandOutcome {
        let command = ClusterCommand(id: "cmd_" + UUID().uuidString.lowercased(), kind: kind, instanceID: instanceID, epoch: epoch)
        if node == nodeID {
            guard let handler = lock.withLock({ handler }) else { throw ClusterError(code: .stopped, message: "The node is not running.") }
            return await handler(command)
        }
        let sender = nodeID
        let result = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
            lock.withLock { waiters[command.id] = continuation }
            Task {
                do {
                    try await pool.run { connection in
                        try Self.withoutWaitingForDisk(connection) {
                            try connection.query(
                                "INSERT INTO commands(id, node_id, sender_node, instance_id, kind, epoch, created_at) "
                                    + "VALUES($1, $2, $3, $4, $5, $6, \(Self.now))",
                                [command.id, node, sender, instanceID, kind.rawValue, String(epoch)]
                            )
                            try connection.query("SELECT pg_notify($1, $2)", [Self.channel(of: node), Self.payload(of: command)])
                        }
                    }
                } catch {
                    self.resolve(command.id, with: .failure(error))
                    return
                }
                try? await Task.sleep(for: timeout)
                self.resolve(command.id, with: .failure(ClusterError(
                    code: .ownerUnreachable, message: "Node \(node), which holds instance \(instanceID), did not answer within \(timeout)."
                )))
            }
        }
        return ClusterCommandOutcome(wireValue: result) ?? .done
    }

    /// The other nodes of the cluster that are alive now.
    public func otherLiveNodes() async throws -> [ClusterNode] {
        let node = nodeID
        return try await pool.run { connection in
            try connection.query("SELECT id, url FROM nodes WHERE NOT dead AND id <> $1 ORDER BY started_at", [node]).rows.compactMap { row in
                guard let id = row[0], let url = row[1] else { return nil }
                return ClusterNode(id: id, url: url)
            }
        }
    }

    /// Publishes what this node's live sessions are doing (session id → `listening`,
    /// `thinking`, `speaking`, `tool_running`), replacing what it published before, for the
    /// other nodes' operator consoles.
    /// - Throws: `PostgresError` when the database cannot be reached.
    public func publishSessionStates(_ states: [String: String]) async throws {
        let json = String(decoding: try JSONEncoder().encode(states), as: UTF8.self)
        let node = nodeID
        try await pool.run { connection in
            try connection.query("UPDATE nodes SET session_states = $2 WHERE id = $1", [node, json])
        }
    }

    /// What the other live nodes' sessions are doing, by session id, as those nodes last
    /// published it (`publishSessionStates`). A row that does not decode counts as none.
    public func otherNodesSessionStates() async throws -> [String: String] {
        let node = nodeID
        let published = try await pool.run { connection in
            try connection.query("SELECT session_states FROM nodes WHERE NOT dead AND id <> $1", [node]).rows.compactMap { $0[0] }
        }
        var states: [String: String] = [:]
        for json in published {
            guard let decoded = try? JSONDecoder().decode([String: String].self, from: Data(json.utf8)) else { continue }
            states.merge(decoded) { first, _ in first }
        }
        return states
    }

    /// Resumes the sender waiting for command `id`, if it still waits.
    private func resolve(_ id: String, with result: Result<String, any Error>) {
        lock.withLock { waiters.removeValue(forKey: id) }?.resume(with: result)
    }

    /// A notification on this node's channel: a command to carry out
    /// (`command:ID:KIND:EPOCH:INSTANCE`), or an acknowledgement of one this node sent
    /// (`ack:ID:OUTCOME`).
    private func received(_ payload: String) {
        let parts = payload.split(separator: ":", maxSplits: 4, omittingEmptySubsequences: false).map(String.init)
        if parts.first == "command", parts.count == 5, let kind = ClusterCommand.Kind(rawValue: parts[2]), let epoch = Int64(parts[3]) {
            let command = ClusterCommand(id: parts[1], kind: kind, instanceID: parts[4], epoch: epoch)
            Task { await self.carryOut(command) }
        } else if parts.first == "ack", parts.count >= 3 {
            resolve(parts[1], with: .success(parts[2]))
        }
    }

    /// The notification that carries `command` to its owner: everything the owner needs, so
    /// it acts without reading the outbox first.
    static func payload(of command: ClusterCommand) -> String {
        "command:\(command.id):\(command.kind.rawValue):\(command.epoch):\(command.instanceID)"
    }

    /// Carries out a command and acknowledges it to its sender. The commands are idempotent
    /// (cancel, close, close if older, report), so one brought twice — by a rescan and its
    /// notification — does no harm; only the first acknowledgement is sent.
    private func carryOut(_ command: ClusterCommand) async {
        guard let handler = lock.withLock({ handler }) else { return }
        let outcome = await handler(command)
        _ = try? await pool.run { connection in
            try Self.withoutWaitingForDisk(connection) {
                try connection.query(
                    "WITH done AS (UPDATE commands SET acknowledged_at = \(Self.now), result = $2 WHERE id = $1 AND acknowledged_at IS NULL "
                        + "RETURNING sender_node) SELECT pg_notify('parley_' || sender_node, 'ack:' || $1 || ':' || $2) FROM done",
                    [command.id, outcome.wireValue]
                )
            }
        }
    }

    /// Runs `body` in a transaction that commits without waiting for the disk: commands and
    /// their acknowledgements live for moments, and a database crash that loses one only
    /// makes its sender time out, while an fsync per step would triple a command's latency.
    private static func withoutWaitingForDisk(_ connection: PostgresConnection, _ body: () throws -> Void) throws {
        try connection.transaction {
            try connection.execute("SET LOCAL synchronous_commit TO off")
            try body()
        }
    }

    /// After (re)connecting the LISTEN: carries out the commands for this node that are not
    /// acknowledged yet, and resolves the senders whose acknowledgement came while it was away.
    private func catchUp() async {
        let node = nodeID
        let missed = (try? await pool.run { connection in
            try connection.query(
                "SELECT id, kind, epoch, instance_id FROM commands WHERE node_id = $1 AND acknowledged_at IS NULL ORDER BY seq", [node]
            ).rows.compactMap { row in
                row[1].flatMap(ClusterCommand.Kind.init).map { ClusterCommand(id: row[0] ?? "", kind: $0, instanceID: row[3] ?? "", epoch: Int64(row[2] ?? "") ?? 0) }
            }
        }) ?? []
        for command in missed { await carryOut(command) }
        let waiting = lock.withLock { Array(waiters.keys) }
        guard !waiting.isEmpty else { return }
        let answered = (try? await pool.run { connection in
            try connection.query(
                "SELECT id, result FROM commands WHERE id = ANY($1::text[]) AND acknowledged_at IS NOT NULL",
                ["{" + waiting.joined(separator: ",") + "}"]
            ).rows
        }) ?? []
        for row in answered { if let id = row[0] { resolve(id, with: .success(row[1] ?? "done")) } }
    }

    // MARK: Limits

    /// Registers a session in the cluster-wide registry, unless one of `limits` is reached on
    /// live nodes: the cluster's maximum, or `owner`'s per-token or per-user limit. Admissions
    /// are serialized by an advisory lock, so racing ones never exceed a limit together.
    public func admitSession(
        id: String, instanceID: String?, owner: SessionOwner? = nil, limits: ClusterSessionLimits
    ) async throws -> ClusterAdmission {
        let nodeID = self.nodeID
        return try await pool.run { connection in
            try connection.transaction {
                try connection.execute("SELECT pg_advisory_xact_lock(\(Self.admissionLock))")
                let counts = try connection.query(
                    """
                    SELECT count(*), count(*) FILTER (WHERE s.user_id = $2), count(*) FILTER (WHERE s.token_id = $3)
                    FROM live_sessions s JOIN nodes n ON n.id = s.node_id WHERE NOT n.dead AND s.id <> $1
                    """,
                    [id, owner?.user, owner?.tokenID]
                ).rows.first.map { row in row.map { Int($0 ?? "") ?? 0 } } ?? [0, 0, 0]
                if let maximum = limits.maximum, counts[0] >= maximum { return .clusterFull(maximum: maximum) }
                if owner != nil, counts[2] >= limits.perToken { return .tokenLimit(maximum: limits.perToken) }
                if owner != nil, counts[1] >= limits.perUser { return .userLimit(maximum: limits.perUser) }
                try connection.query(
                    """
                    INSERT INTO live_sessions(id, node_id, instance_id, user_id, token_id, started_at)
                    VALUES($1, $2, $3, $4, $5, \(Self.now)) ON CONFLICT(id) DO NOTHING
                    """,
                    [id, nodeID, instanceID, owner?.user, owner?.tokenID]
                )
                return .admitted
            }
        }
    }

    /// Removes a session from the cluster-wide count, retrying (from 100 ms, doubling, up to
    /// 5 s apart) while the database cannot be reached, so no ended session keeps a place. The
    /// retries stop when the node leaves the cluster: `stop` removes all its sessions at once.
    public func sessionEnded(id: String) async {
        var pause = Duration.milliseconds(100)
        while (try? await pool.run({ connection in try connection.query("DELETE FROM live_sessions WHERE id = $1", [id]) })) == nil {
            guard lock.withLock({ heartbeat != nil }) else { return }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .seconds(5))
        }
    }

    /// Takes one token from `key`'s bucket, shared by every node: at most `perMinute` a
    /// minute, refilled evenly. One statement, so racing nodes never take the same token.
    /// - Returns: `false` when the key is over its limit.
    public func allowTokenMint(key: String, perMinute: Int) async throws -> Bool {
        let rate = String(max(perMinute, 1))
        return try await pool.run { connection in
            try !connection.query(
                "INSERT INTO token_buckets AS b(key, tokens, updated_at) VALUES($1, $2::double precision - 1, \(Self.now)) "
                    + "ON CONFLICT(key) DO UPDATE SET tokens = LEAST($2::double precision, b.tokens + (\(Self.now) - b.updated_at) * $2::double precision / 60) - 1, "
                    + "updated_at = \(Self.now) "
                    + "WHERE LEAST($2::double precision, b.tokens + (\(Self.now) - b.updated_at) * $2::double precision / 60) >= 1 RETURNING tokens",
                [key, rate]
            ).rows.isEmpty
        }
    }

    // MARK: Heartbeat and sweeper

    /// One heartbeat, then a sweep if no other node is sweeping. A node declared dead stays
    /// dead: its heartbeat finds no live row, it ends its sessions (`onDeclaredDead`), and only
    /// then registers again.
    private func beat() async {
        let node = nodeID
        let alive = try? await pool.run { connection in
            !(try connection.query("UPDATE nodes SET heartbeat_at = \(Self.now) WHERE id = $1 AND NOT dead RETURNING id", [node]).rows.isEmpty)
        }
        if alive == false {
            if let onDeclaredDead = lock.withLock({ self.onDeclaredDead }) { await onDeclaredDead() }
            _ = try? await pool.run { connection in
                try connection.query("UPDATE nodes SET dead = false, heartbeat_at = \(Self.now) WHERE id = $1", [node])
            }
        }
        _ = try? await sweep()
    }

    /// Declares the nodes silent for `silenceBeforeDeath` dead: their live instances become
    /// `lost` (epoch raised, so a node that was only paused can write nothing more for them)
    /// and their sessions leave the cluster-wide count. Runs only where it gets the sweeper's
    /// advisory lock.
    /// - Returns: the nodes declared dead now (empty when another node holds the lock).
    @discardableResult
    public func sweep() async throws -> [String] {
        try await pool.run { connection in
            try connection.transaction {
                let locked = try connection.query("SELECT pg_try_advisory_xact_lock(\(Self.sweeperLock))").rows.first?.first ?? nil
                guard locked == "t" else { return [] }
                let dead = try connection.query(
                    "UPDATE nodes SET dead = true WHERE NOT dead AND heartbeat_at < \(Self.now) - \(Self.silenceBeforeDeath) RETURNING id"
                ).rows.compactMap { $0[0] }
                try connection.query(
                    "UPDATE instances SET status = 'lost', owner_node = NULL, epoch = epoch + 1 "
                        + "WHERE status = 'live' AND owner_node IN (SELECT id FROM nodes WHERE dead)"
                )
                try connection.query("DELETE FROM live_sessions WHERE node_id IN (SELECT id FROM nodes WHERE dead)")
                try connection.query("DELETE FROM commands WHERE created_at < \(Self.now) - 3600")
                return dead
            }
        }
    }

    /// The database's clock, in seconds since 1970.
    static let now = "extract(epoch from clock_timestamp())::double precision"
}
