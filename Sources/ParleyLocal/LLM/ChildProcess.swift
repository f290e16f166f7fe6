import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Spawning and reaping of a child process with `posix_spawn`, set up so the child cannot
/// outlive Parley.
///
/// On Linux the program is started through util-linux's `setpriv --pdeathsig KILL`, which
/// sets `PR_SET_PDEATHSIG` and then execs the program: the kernel kills the child as soon as
/// the thread that spawned it ends — including when Parley is killed by SIGTERM, SIGINT or
/// SIGKILL, or crashes. The caller must therefore spawn from a thread that lives as long as
/// the child should (the supervisor thread). The child also gets its own process group, so a
/// Ctrl-C in the terminal reaches Parley, which then stops the child in order, and default
/// signal dispositions with an empty signal mask.
enum ChildProcess {
    /// util-linux's `setpriv`, when present (Debian ships it in the essential `util-linux`).
    static let deathSignalWrapper: String? = ["/usr/bin/setpriv", "/bin/setpriv"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Where a child's standard streams go.
    enum StandardStreams {
        /// stdin from /dev/null, stdout and stderr written to the file at the path (truncated).
        case log(String)
        /// stdin and stdout are the descriptor (one end of a socket pair), stderr /dev/null.
        case socket(Int32)
    }

    /// Starts `executable` with `arguments`, stdin from /dev/null and stdout and stderr
    /// written to `logPath` (truncated). Returns the child's pid.
    /// - Throws: `POSIXError` when `posix_spawn` fails.
    static func spawn(executable: String, arguments: [String], logPath: String) throws -> pid_t {
        try spawn(executable: executable, arguments: arguments, streams: .log(logPath))
    }

    /// Starts `executable` with `arguments` and its standard streams as `streams` says.
    /// Returns the child's pid.
    /// - Throws: `POSIXError` when `posix_spawn` fails.
    static func spawn(executable: String, arguments: [String], streams: StandardStreams) throws -> pid_t {
        var argv = [executable] + arguments
        var path = executable
        #if os(Linux)
        if let wrapper = deathSignalWrapper {
            argv = [wrapper, "--pdeathsig", "KILL", "--"] + argv
            path = wrapper
        }
        #endif

        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t?
        var attributes: posix_spawnattr_t?
        #else
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        switch streams {
        case .log(let logPath):
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        case .socket(let descriptor):
            posix_spawn_file_actions_adddup2(&actions, descriptor, 0)
            posix_spawn_file_actions_adddup2(&actions, descriptor, 1)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        #if os(Linux)
        // Nothing else of this process's goes to the child: an inherited listening socket
        // would keep a port open (and accepting) after this process closed it.
        _ = closeDescriptorsFrom?(&actions, 3)
        #endif

        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        var defaultSignals = sigset_t()
        sigemptyset(&defaultSignals)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGQUIT] { sigaddset(&defaultSignals, signal) }
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        posix_spawnattr_setsigdefault(&attributes, &defaultSignals)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        let cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var pid: pid_t = 0
        let status = cArguments.withUnsafeBufferPointer { buffer in
            posix_spawn(&pid, path, &actions, &attributes, buffer.baseAddress!, environ)
        }
        guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EINVAL) }
        return pid
    }

    #if os(Linux)
    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+), which the Glibc module does not export.
    private static let closeDescriptorsFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()
    #endif

    /// Blocks until `pid` exits and returns how it ended.
    static func wait(for pid: pid_t) -> ExitStatus {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            if errno != EINTR { return .unknown }
        }
        let signal = status & 0x7F
        if signal == 0 { return .exited(Int((status >> 8) & 0xFF)) }
        return .signalled(Int(signal))
    }

    /// How a child process ended.
    enum ExitStatus: Sendable, Hashable, CustomStringConvertible {
        case exited(Int)
        case signalled(Int)
        case unknown

        var description: String {
            switch self {
            case let .exited(code): "exited with status \(code)"
            case let .signalled(signal): "was killed by signal \(signal)"
            case .unknown: "ended (status unknown)"
            }
        }
    }
}
