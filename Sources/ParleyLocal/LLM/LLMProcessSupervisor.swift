import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps one child process alive on a dedicated thread: spawns it, waits for it to exit and
/// respawns it after a delay that doubles on each quick failure.
///
/// The thread that spawns the child is the one that waits for it, so the child's
/// parent-death signal (see `ChildProcess`) stays armed exactly as long as it is supervised.
final class LLMProcessSupervisor: @unchecked Sendable {  // `condition` guards every `var`.
    /// What the supervisor is doing, for callers and metrics.
    struct Snapshot: Sendable {
        var processID: pid_t?
        var restartCount: Int
        var lastExit: ChildProcess.ExitStatus?
        var spawnFailure: String?
        var isSupervising: Bool
    }

    /// A child that ran at least this long resets the restart delay to its initial value.
    static let healthyRunDuration: TimeInterval = 30
    /// How long a child has to exit after SIGTERM before it gets SIGKILL.
    static let terminationGracePeriod: TimeInterval = 5

    private let executable: String
    private let arguments: [String]
    private let logPath: String
    private let initialRestartDelay: TimeInterval
    private let maximumRestartDelay: TimeInterval

    private let condition = NSCondition()
    private var processID: pid_t?
    private var restartCount = 0
    private var lastExit: ChildProcess.ExitStatus?
    private var spawnFailure: String?
    private var stopRequested = false
    private var isSupervising = false
    private var exitWaiters: [CheckedContinuation<Void, Never>] = []

    init(executable: String, arguments: [String], logPath: String, initialRestartDelay: TimeInterval, maximumRestartDelay: TimeInterval) {
        self.executable = executable
        self.arguments = arguments
        self.logPath = logPath
        self.initialRestartDelay = initialRestartDelay
        self.maximumRestartDelay = maximumRestartDelay
    }

    var snapshot: Snapshot {
        condition.withLock {
            Snapshot(
                processID: processID, restartCount: restartCount,
                lastExit: lastExit, spawnFailure: spawnFailure, isSupervising: isSupervising
            )
        }
    }

    /// Starts the supervisor thread unless it is already running or was stopped.
    func launch() {
        let shouldStart = condition.withLock {
            guard !isSupervising, !stopRequested else { return false }
            isSupervising = true
            return true
        }
        guard shouldStart else { return }
        let thread = Thread { [self] in
            Thread.current.name = "parley-llama"  // From inside: see ServiceLoop.start.
            supervise()
        }
        thread.start()
    }

    /// Asks the child to exit (SIGTERM, then SIGKILL after the grace period) and stops
    /// restarting it. Returns at once; `waitForExit()` waits for the thread to finish.
    func requestStop() {
        let child: pid_t? = condition.withLock {
            stopRequested = true
            condition.broadcast()
            return processID
        }
        guard let child else { return }
        kill(child, SIGTERM)
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.terminationGracePeriod) { [self] in
            // The pid is still ours while it is recorded: it is cleared only after reaping.
            condition.withLock { if processID == child { _ = kill(child, SIGKILL) } }
        }
    }

    /// Kills the child at once and stops restarting it (for teardown without waiting).
    func terminateImmediately() {
        condition.withLock {
            stopRequested = true
            condition.broadcast()
            if let processID { kill(processID, SIGKILL) }
        }
    }

    /// Sends `signal` to the current child, if any (tests use it to simulate a crash).
    @discardableResult
    func signalChild(_ signal: Int32) -> pid_t? {
        condition.withLock {
            guard let processID else { return nil }
            kill(processID, signal)
            return processID
        }
    }

    /// Returns once the supervisor thread has reaped the last child and ended.
    func waitForExit() async {
        await withCheckedContinuation { continuation in
            let finished = condition.withLock {
                if !isSupervising { return true }
                exitWaiters.append(continuation)
                return false
            }
            if finished { continuation.resume() }
        }
    }

    private func supervise() {
        var delay = initialRestartDelay
        while !condition.withLock({ stopRequested }) {
            let started = Date()
            do {
                let child = try ChildProcess.spawn(executable: executable, arguments: arguments, logPath: logPath)
                condition.withLock {
                    processID = child
                    spawnFailure = nil
                    if stopRequested { kill(child, SIGTERM) }
                    condition.broadcast()
                }
                let status = ChildProcess.wait(for: child)
                condition.withLock {
                    processID = nil
                    lastExit = status
                    condition.broadcast()
                }
            } catch {
                condition.withLock {
                    spawnFailure = "could not start \(executable): \(error)"
                    condition.broadcast()
                }
            }
            if Date().timeIntervalSince(started) >= Self.healthyRunDuration { delay = initialRestartDelay }
            condition.withLock {
                guard !stopRequested else { return }
                restartCount += 1
                let resume = Date().addingTimeInterval(delay)
                while !stopRequested && condition.wait(until: resume) {}
            }
            delay = min(delay * 2, maximumRestartDelay)
        }
        let waiters = condition.withLock {
            isSupervising = false
            defer { exitWaiters = [] }
            condition.broadcast()
            return exitWaiters
        }
        waiters.forEach { $0.resume() }
    }
}
