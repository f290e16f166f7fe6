import Foundation

#if canImport(Glibc)
import Glibc
import ParleyTesting
#endif

/// Reads what a process holds from `/proc`: open file descriptors, TCP sockets by port, and
/// resident memory. Counting sockets by port keeps a leak check exact while other tests run
/// in the same process.
enum ResourceProbe {
    /// Open file descriptors of process `pid` (this process by default).
    static func openFileDescriptors(pid: String = "self") -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }

    /// What each open file descriptor of process `pid` points at (`socket:[…]`, a path, `pipe:[…]`).
    static func descriptorTargets(pid: String = "self") -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return entries.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)") }.sorted()
    }

    /// The whole text of a `/proc` file. `String(contentsOfFile:)` stops after the first page of
    /// these files (they report a size of 0), which would hide most of a busy `/proc/net/tcp`.
    static func procText(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        return String(decoding: (try? handle.readToEnd()) ?? Data(), as: UTF8.self)
    }

    /// CPU time process `pid` has used (user + system), in seconds.
    static func cpuSeconds(pid: String = "self") -> Double {
        guard let stat = procText("/proc/\(pid)/stat"),
              let afterName = stat.range(of: ") ")?.upperBound else { return -1 }
        // Fields after the command name start at field 3 (state); utime and stime are fields 14 and 15.
        let fields = stat[afterName...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return -1 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The `/proc/<pid>/net` table entry of a `socket:[inode]` descriptor target, for messages.
    static func describe(_ target: String, pid: String = "self") -> String {
        guard target.hasPrefix("socket:[") else { return target }
        let inode = String(target.dropFirst(8).dropLast())
        for table in ["tcp", "tcp6", "udp", "udp6", "unix", "netlink", "raw", "raw6", "packet"] {
            guard let text = procText("/proc/\(pid)/net/\(table)") else { continue }
            for line in text.split(separator: "\n") where line.split(separator: " ").contains(Substring(inode)) {
                return "\(table): \(line.split(separator: " ", omittingEmptySubsequences: true).prefix(10).joined(separator: " "))"
            }
        }
        return target
    }

    /// Resident set size of process `pid` in kilobytes.
    static func residentKilobytes(pid: String = "self") -> Int {
        guard let status = procText("/proc/\(pid)/status") else { return -1 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? -1
        }
        return -1
    }

    /// TCP sockets open in process `pid` whose local or remote port is `port` (listeners
    /// included); with `remoteOnly`, only the sockets connected to `port` elsewhere.
    static func sockets(pid: String = "self", port: Int, remoteOnly: Bool = false) -> Int {
        let inodes = socketInodes(port: port, remoteOnly: remoteOnly)
        guard !inodes.isEmpty, let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else { return 0 }
        return entries.count { entry in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(entry)"),
                  target.hasPrefix("socket:[") else { return false }
            return inodes.contains(String(target.dropFirst(8).dropLast()))
        }
    }

    /// The inodes of TCP sockets (IPv4 and IPv6; TIME_WAIT has none) with `port` at either end,
    /// or only at the remote end.
    private static func socketInodes(port: Int, remoteOnly: Bool) -> Set<String> {
        let hexPort = String(format: "%04X", port)
        var inodes: Set<String> = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = procText(table) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > 9 else { continue }
                let ends = remoteOnly ? [fields[2]] : [fields[1], fields[2]]
                if ends.contains(where: { $0.hasSuffix(":" + hexPort) }), fields[9] != "0" { inodes.insert(String(fields[9])) }
            }
        }
        return inodes
    }

    /// Waits until `condition` holds, checking every 20 ms, for at most `seconds`.
    /// - Returns: whether it held in time.
    static func eventually(within seconds: Double, _ condition: () async -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + TestDeadline.seconds(seconds)
        while ContinuousClock.now < deadline {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return await condition()
    }
}
