import ParleySync

/// The tasks a voice session started, each tracked from its start until it returns.
///
/// Every task a session starts goes through here, so it has an owner: the session can tell
/// whether any is still running, and when it closes it cancels every one (`cancelAll()`) and
/// waits for each to end (`waitForAll()`). A task started after `cancelAll()` is cancelled at once.
///
/// ```swift
/// let tasks = SessionTasks()
/// let work = tasks.start { await transcribe() }
/// tasks.cancelAll()
/// await tasks.waitForAll()  // `work` has ended
/// ```
final class SessionTasks: Sendable {
    /// What it takes to stop a task and to wait for its end, whatever it returns.
    private struct Entry: Sendable {
        let cancel: @Sendable () -> Void
        let wait: @Sendable () async -> Void
    }

    private struct State {
        var nextID = 0
        var running: [Int: Entry] = [:]
        /// Tasks that returned before they were tracked (so they are never tracked).
        var endedBeforeTracked: Set<Int> = []
        var isClosed = false
    }

    private let state = Locked(State())

    /// Whether no task is running.
    var isEmpty: Bool { state.withLock { $0.running.isEmpty } }

    /// Starts `operation` in a task of the session.
    /// - Returns: the task, to cancel it early.
    @discardableResult
    func start(_ operation: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        let id = nextID()
        let task = Task {
            defer { ended(id) }
            await operation()
        }
        track(id, cancel: { task.cancel() }, wait: { await task.value })
        return task
    }

    /// Starts `operation`, which produces a value or fails, in a task of the session.
    /// - Returns: the task, to await its value or cancel it early.
    func start<Success: Sendable>(_ operation: @escaping @Sendable () async throws -> Success) -> Task<Success, any Error> {
        let id = nextID()
        let task = Task {
            defer { ended(id) }
            return try await operation()
        }
        track(id, cancel: { task.cancel() }, wait: { _ = await task.result })
        return task
    }

    /// Cancels every task, and any started from now on.
    func cancelAll() {
        let running = state.withLock { state in
            state.isClosed = true
            return Array(state.running.values)
        }
        for entry in running { entry.cancel() }
    }

    /// Returns once every task has ended, including any started meanwhile.
    func waitForAll() async {
        while true {
            let running = state.withLock { Array($0.running.values) }
            guard !running.isEmpty else { return }
            // Each task leaves `running` as it ends: a further round finds only tasks started meanwhile.
            for entry in running { await entry.wait() }
        }
    }

    private func nextID() -> Int {
        state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
    }

    private func track(_ id: Int, cancel: @escaping @Sendable () -> Void, wait: @escaping @Sendable () async -> Void) {
        let cancelsAtOnce = state.withLock { state in
            guard state.endedBeforeTracked.remove(id) == nil else { return false }
            state.running[id] = Entry(cancel: cancel, wait: wait)
            return state.isClosed
        }
        if cancelsAtOnce { cancel() }
    }

    private func ended(_ id: Int) {
        state.withLock { state in
            if state.running.removeValue(forKey: id) == nil { state.endedBeforeTracked.insert(id) }
        }
    }
}
