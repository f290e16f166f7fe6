import Foundation

/// CPU time and memory of processes, from `getrusage` and `/proc`.
enum ProcessFigures {
    /// CPU seconds (user + system) this process has used.
    static func ownCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// CPU seconds (user + system) this process and its children `pids` (a child process the
    /// embedded stack runs, such as llama-server) have used; a child that is gone counts nothing.
    static func ownCPUSeconds(withChildren pids: [Int32]) -> Double {
        ownCPUSeconds() + pids.reduce(0) { $0 + (cpuSeconds(pid: $1) ?? 0) }
    }

    /// CPU seconds (user + system) process `pid` has used, from `/proc/PID/stat`; `nil` when gone.
    /// - Parameter includingReapedChildren: also the CPU of its children that ended and were waited for.
    static func cpuSeconds(pid: Int32, includingReapedChildren: Bool = false) -> Double? {
        cpuSeconds(statFile: "/proc/\(pid)/stat", includingReapedChildren: includingReapedChildren)
    }

    /// CPU seconds (user + system) from a `/proc/…/stat` file (a process's, or a thread's under
    /// `task/`); `nil` when it cannot be read.
    static func cpuSeconds(statFile: String, includingReapedChildren: Bool = false) -> Double? {
        guard let fields = statFields(statFile), fields.count > 14 else { return nil }
        // utime and stime are fields 14 and 15 of the file, cutime and cstime 16 and 17.
        let ticks = (includingReapedChildren ? fields[11...14] : fields[11...12]).compactMap { Double($0) }
        return ticks.reduce(0, +) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The parent of process `pid`; `nil` when it is gone.
    static func parentID(of pid: Int32) -> Int32? {
        statFields("/proc/\(pid)/stat").flatMap { $0.count > 1 ? Int32($0[1]) : nil }
    }

    /// The fields of a `/proc/…/stat` file after the command name (from the state, field 3, on).
    private static func statFields(_ statFile: String) -> [Substring]? {
        guard let text = try? String(contentsOfFile: statFile, encoding: .utf8),
              let end = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: end)...].split(separator: " ")
    }

    /// Seconds the threads of process `pid` spent ready to run but waiting for a CPU (the sum
    /// of `run_delay` in `/proc/PID/task/*/schedstat`, threads that already ended excluded);
    /// `nil` when the process is gone. On a shared machine this is the time other work took.
    static func runQueueWaitSeconds(pid: Int32) -> Double? {
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return nil }
        var nanoseconds = 0.0
        for thread in threads {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/schedstat", encoding: .utf8) else { continue }
            let fields = text.split(separator: " ")
            if fields.count >= 2, let wait = Double(fields[1]) { nanoseconds += wait }
        }
        return nanoseconds / 1e9
    }

    /// CPU seconds every core of the machine has been busy (not idle or waiting for I/O),
    /// from `/proc/stat`; `nil` when it cannot be read.
    static func machineBusyCPUSeconds() -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") }) else { return nil }
        // user nice system idle iowait irq softirq steal ...
        let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard ticks.count >= 8 else { return nil }
        return (ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6] + ticks[7]) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The ids of this process's children whose command name is `name`.
    static func childProcessIDs(named name: String) -> [Int32] {
        childProcessIDs(of: getpid()).filter { pid in
            (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.contains("(\(name))") == true
        }
    }

    /// The ids of the running children of process `parent`.
    static func childProcessIDs(of parent: Int32) -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap(Int32.init).filter { parentID(of: $0) == parent }
    }

    /// Resident memory of process `pid` in bytes (`VmRSS`); `nil` when gone.
    static func residentBytes(pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            if parts.count >= 2, let kilobytes = Int(parts[1]) { return kilobytes * 1024 }
        }
        return nil
    }
}

extension Duration {
    /// The duration in milliseconds.
    var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }
}
