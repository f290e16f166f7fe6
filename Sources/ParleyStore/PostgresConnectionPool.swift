import Foundation

/// A few PostgreSQL connections, each owned by a thread of its own, that run the store's
/// calls: a caller awaits its call without blocking its executor (a session's, the network
/// thread's), and calls run in parallel up to the number of connections.
///
/// A call that finds its connection lost (the server restarted, the network failed)
/// reconnects and runs again, for up to `reconnectTimeout`; calls must therefore be
/// idempotent, which the store's are (upserts, deletes, reads). Later, cluster mode adds one
/// dedicated connection for LISTEN beside the pool.
///
/// `@unchecked Sendable`: `jobs`, `isClosing`, `runningWorkers`, `closeWaiters` and
/// `outageStart` are only touched while holding `condition`; each connection only on its
/// worker's thread.
final class PostgresConnectionPool: @unchecked Sendable {
    /// A call queued for the next free connection.
    private typealias Job = (PostgresConnection) -> Void

    private let condition = NSCondition()
    private var jobs: [Job] = []
    private var isClosing = false
    private var runningWorkers = 0
    private var closeWaiters: [CheckedContinuation<Void, Never>] = []
    /// When reconnecting to a lost server first failed; `nil` while it answers.
    private var outageStart: ContinuousClock.Instant?
    private let reconnectTimeout: Duration

    /// Opens `size` connections to `url` and starts their threads.
    /// - Parameters:
    ///   - reconnectTimeout: how long a call retries a lost connection before it fails.
    /// - Throws: `PostgresError` when a connection cannot be opened.
    init(url: String, size: Int, reconnectTimeout: Duration) throws {
        self.reconnectTimeout = reconnectTimeout
        let connections = try (0..<max(1, size)).map { _ in try PostgresConnection(url: url) }
        runningWorkers = connections.count
        for (index, connection) in connections.enumerated() {
            let handover = Handover(connection: connection)
            let thread = Thread { [self] in
                Thread.current.name = "parley-postgres-\(index)"  // From inside: Foundation names only the running thread.
                work(on: handover.connection)
            }
            thread.start()
        }
    }

    /// Runs `body` on the next free connection and returns what it returns.
    /// - Throws: what `body` throws, a `PostgresError` once the connection stayed lost for
    ///   `reconnectTimeout`, or when the pool is closed.
    @discardableResult
    func run<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let accepted = enqueue { [self] connection in
                continuation.resume(with: Result { try runReconnecting(body, on: connection) })
            }
            if !accepted { continuation.resume(throwing: PostgresError(message: "the store is closed")) }
        }
    }

    /// Lets the calls already queued finish, then closes every connection. Later calls throw.
    func close() async {
        await withCheckedContinuation { continuation in
            condition.lock()
            isClosing = true
            condition.broadcast()
            if runningWorkers == 0 {
                condition.unlock()
                continuation.resume()
            } else {
                closeWaiters.append(continuation)
                condition.unlock()
            }
        }
    }

    /// Tells the workers to stop once the queue is empty, without waiting for them.
    func stop() {
        condition.lock()
        isClosing = true
        condition.broadcast()
        condition.unlock()
    }

    private func enqueue(_ job: @escaping Job) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !isClosing else { return false }
        jobs.append(job)
        condition.signal()
        return true
    }

    /// A worker: runs queued calls on its connection until the pool closes.
    private func work(on connection: PostgresConnection) {
        while let job = nextJob() { job(connection) }
        condition.lock()
        runningWorkers -= 1
        let waiters = runningWorkers == 0 ? closeWaiters : []
        if runningWorkers == 0 { closeWaiters = [] }
        condition.unlock()
        waiters.forEach { $0.resume() }
    }

    /// The next queued call; `nil` once the pool is closing and the queue is empty.
    private func nextJob() -> Job? {
        condition.lock()
        defer { condition.unlock() }
        while jobs.isEmpty && !isClosing { condition.wait() }
        return jobs.isEmpty ? nil : jobs.removeFirst()
    }

    /// Runs `body`, reconnecting and running it again while the connection is lost: at once
    /// when a connection that looked up fails, then after 20 ms, and twice as long each time
    /// up to 500 ms. It gives up once the server has been out of reach for `reconnectTimeout`
    /// (counted from the pool's first failed reconnection, so the calls queued behind do not
    /// wait as long again), or at once when the pool is closing.
    private func runReconnecting<T>(_ body: (PostgresConnection) throws -> T, on connection: PostgresConnection) throws -> T {
        var delay = Duration.milliseconds(20)
        var mustReconnect = !connection.isConnected
        while true {
            do {
                if mustReconnect {
                    try connection.reconnect()
                    condition.withLock { outageStart = nil }
                }
                return try body(connection)
            } catch let error as PostgresError where error.isConnectionLost && (!mustReconnect || mayRetry(after: delay)) {
                if mustReconnect {
                    usleep(useconds_t(delay / .microseconds(1)))
                    delay = min(delay * 2, .milliseconds(500))
                }
                mustReconnect = true
            }
        }
    }

    /// Whether a call that lost its connection may wait `delay` and try again; notes when
    /// the server went out of reach.
    private func mayRetry(after delay: Duration) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let now = ContinuousClock.now
        let start = outageStart ?? now
        outageStart = start
        return !isClosing && now + delay < start + reconnectTimeout
    }
}

/// A connection on its way from the thread that opened it to the worker that owns it from
/// then on. `@unchecked Sendable` without a lock: it is handed over once and used by one
/// thread only, before and after.
private struct Handover: @unchecked Sendable {
    let connection: PostgresConnection
}
