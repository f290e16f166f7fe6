import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, with the parts of `Foundation.Process`'s API the
/// tests and benchmarks use.
///
/// Why not `Process`: on Linux, `Process.run()` in swift-corelibs-foundation (Swift 6.3) scans
/// `/proc/self/fd` copying 256 bytes of every directory entry, reading past glibc's buffer;
/// now and then the read hits an unmapped page and the whole test process crashes
/// (swift-corelibs-foundation pull request 5472). A test suite that starts hundreds of
/// processes meets it every few runs.
///
/// ```swift
/// let child = Subprocess()
/// child.executableURL = URL(fileURLWithPath: "/usr/bin/env")
/// child.arguments = ["true"]
/// try child.run()
/// let status = await child.exitStatus()
/// ```
public final class Subprocess: @unchecked Sendable {  // `lock` guards every mutable property.
    /// Where a standard stream of the child goes: a pipe, a file handle, or (nil) this process's.
    public typealias Stream = Any

    private let lock = NSLock()
    private var _executableURL: URL?
    private var _arguments: [String] = []
    private var _environment: [String: String]?
    private var _currentDirectoryURL: URL?
    private var _standardInput: Stream?
    private var _standardOutput: Stream?
    private var _standardError: Stream?
    private var _terminationHandler: (@Sendable (Subprocess) -> Void)?
    private var _processIdentifier: pid_t = 0
    private var _terminationStatus: Int32?
    private var exitWaiters: [Int: CheckedContinuation<Int32?, Never>] = [:]
    private var nextWaiter = 0

    /// A process to configure, then `run()`.
    public init() {}

    /// The program to run.
    public var executableURL: URL? {
        get { lock.withLock { _executableURL } }
        set { lock.withLock { _executableURL = newValue } }
    }

    /// The arguments after the program's name.
    public var arguments: [String] {
        get { lock.withLock { _arguments } }
        set { lock.withLock { _arguments = newValue } }
    }

    /// The child's whole environment; nil inherits this process's.
    public var environment: [String: String]? {
        get { lock.withLock { _environment } }
        set { lock.withLock { _environment = newValue } }
    }

    /// The child's working directory; nil inherits this process's.
    public var currentDirectoryURL: URL? {
        get { lock.withLock { _currentDirectoryURL } }
        set { lock.withLock { _currentDirectoryURL = newValue } }
    }

    /// A `Pipe` (the child reads its reading end) or a `FileHandle`; nil inherits.
    public var standardInput: Stream? {
        get { lock.withLock { _standardInput } }
        set { lock.withLock { _standardInput = newValue } }
    }

    /// A `Pipe` (the child writes its writing end) or a `FileHandle`; nil inherits.
    public var standardOutput: Stream? {
        get { lock.withLock { _standardOutput } }
        set { lock.withLock { _standardOutput = newValue } }
    }

    /// A `Pipe` (the child writes its writing end) or a `FileHandle`; nil inherits.
    public var standardError: Stream? {
        get { lock.withLock { _standardError } }
        set { lock.withLock { _standardError = newValue } }
    }

    /// Called once, on a background thread, when the child has exited.
    public var terminationHandler: (@Sendable (Subprocess) -> Void)? {
        get { lock.withLock { _terminationHandler } }
        set { lock.withLock { _terminationHandler = newValue } }
    }

    /// The child's pid, 0 before `run()`.
    public var processIdentifier: pid_t { lock.withLock { _processIdentifier } }

    /// Whether the child has been started and has not exited yet.
    public var isRunning: Bool { lock.withLock { _processIdentifier != 0 && _terminationStatus == nil } }

    /// The exit status, or 128 + the signal that ended the child; -1 while it runs.
    public var terminationStatus: Int32 { lock.withLock { _terminationStatus ?? -1 } }

    /// Starts the child. Its standard streams are set up as configured; every other
    /// descriptor of this process is closed in the child.
    /// - Throws: `POSIXError` when the program cannot be started.
    public func run() throws {
        let (executable, arguments, environment, directory, streams) = lock.withLock {
            (_executableURL, _arguments, _environment, _currentDirectoryURL, [_standardInput, _standardOutput, _standardError])
        }
        guard let executable else { throw POSIXError(.ENOENT) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, stream) in streams.enumerated() {
            guard let descriptor = Self.childDescriptor(of: stream, isInput: target == 0) else { continue }
            if descriptor >= 0 {
                posix_spawn_file_actions_adddup2(&actions, descriptor, Int32(target))
            } else {  // FileHandle.nullDevice has no descriptor of its own.
                posix_spawn_file_actions_addopen(&actions, Int32(target), "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            }
        }
        _ = GNUSpawnActions.closeFrom?(&actions, 3)
        if let directory {
            guard let changeDirectory = GNUSpawnActions.changeDirectory else { throw POSIXError(.ENOSYS) }
            _ = changeDirectory(&actions, directory.path)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        var defaultSignals = sigset_t()
        sigemptyset(&defaultSignals)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGQUIT] { sigaddset(&defaultSignals, signal) }
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        posix_spawnattr_setsigdefault(&attributes, &defaultSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let environmentLines = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let envp = environmentLines.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let status = argv.withUnsafeBufferPointer { argv in
            envp.withUnsafeBufferPointer { envp in
                posix_spawn(&pid, executable.path, &actions, &attributes, argv.baseAddress!, envp.baseAddress!)
            }
        }
        guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EINVAL) }
        lock.withLock { _processIdentifier = pid }
        // This process keeps only its own ends of the pipes, each closed once (one pipe may
        // serve as both standard output and standard error).
        var childEnds: [ObjectIdentifier: FileHandle] = [:]
        for (target, stream) in streams.enumerated() {
            guard let pipe = stream as? Pipe else { continue }
            let end = target == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting
            childEnds[ObjectIdentifier(end)] = end
        }
        for end in childEnds.values { try? end.close() }
        let child = pid
        Thread.detachNewThread { [self] in reap(child) }
    }

    /// Sends SIGTERM.
    public func terminate() {
        signal(SIGTERM)
    }

    /// Sends `signal` to the child while it runs.
    public func signal(_ signal: Int32) {
        lock.withLock {
            if _processIdentifier != 0, _terminationStatus == nil { kill(_processIdentifier, signal) }
        }
    }

    /// Waits, without blocking a thread, for the child to exit and returns `terminationStatus`.
    public func exitStatus() async -> Int32 {
        await waitForExit() ?? -1
    }

    /// The exit status, or nil if the child is still running after `limit` (it is left running).
    public func exitStatus(within limit: Duration) async -> Int32? {
        await withTaskGroup(of: Int32?.self) { group in
            group.addTask { await self.waitForExit() }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// The exit status once the child has exited; nil if the waiting task is cancelled first.
    private func waitForExit() async -> Int32? {
        let waiter = lock.withLock {
            defer { nextWaiter += 1 }
            return nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Int32?, Never>) in
                let outcome: Int32?? = lock.withLock {
                    if let status = _terminationStatus { return .some(status) }
                    if Task.isCancelled { return .some(nil) }
                    exitWaiters[waiter] = continuation
                    return .none
                }
                if let outcome { continuation.resume(returning: outcome) }
            }
        } onCancel: {
            lock.withLock { exitWaiters.removeValue(forKey: waiter) }?.resume(returning: nil)
        }
    }

    private func reap(_ pid: pid_t) {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1, errno == EINTR {}
        let signal = status & 0x7F
        let code = signal == 0 ? (status >> 8) & 0xFF : 128 + signal
        let (handler, waiters) = lock.withLock {
            _terminationStatus = code
            defer { exitWaiters = [:] }
            return (_terminationHandler, exitWaiters.values)
        }
        handler?(self)
        for waiter in waiters { waiter.resume(returning: code) }
    }

    private static func childDescriptor(of stream: Stream?, isInput: Bool) -> Int32? {
        switch stream {
        case let pipe as Pipe: (isInput ? pipe.fileHandleForReading : pipe.fileHandleForWriting).fileDescriptor
        case let handle as FileHandle: handle.fileDescriptor
        default: nil
        }
    }
}

/// glibc's `posix_spawn` extensions (2.29+ and 2.34+), which the Glibc module does not export.
private enum GNUSpawnActions {
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    typealias ChangeDirectory = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    /// Closes every descriptor from the given one up in the child.
    static let closeFrom: CloseFrom? = function("posix_spawn_file_actions_addclosefrom_np")
    /// Changes the child's working directory.
    static let changeDirectory: ChangeDirectory? = function("posix_spawn_file_actions_addchdir_np")

    private static func function<T>(_ name: String) -> T? {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(symbol, to: T.self)
    }
}
