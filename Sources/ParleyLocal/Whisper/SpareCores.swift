import Foundation

/// How many cores are free for a computation about to start on the calling thread: the cores
/// minus the other threads the kernel has running or ready to run right now (`procs_running`
/// in /proc/stat, which counts the caller too).
///
/// ggml's worker threads spin at every step of a graph while they wait for each other, so a
/// decode spread over more threads than there are free cores crawls: on a busy 2-core machine
/// a 2-thread Whisper decode took 3 s where a 1-thread one took 0.4 s.
enum SpareCores {
    /// The free cores counting the caller's, or `nil` where the kernel does not say (not Linux).
    static func count(cores: Int = ProcessInfo.processInfo.activeProcessorCount) -> Int? {
        guard let running = runnableThreads() else { return nil }
        return max(1, cores - (running - 1))
    }

    /// `procs_running` from /proc/stat.
    private static func runnableThreads() -> Int? {
        guard let file = fopen("/proc/stat", "r") else { return nil }
        defer { fclose(file) }
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        let prefix = "procs_running "
        while getline(&line, &capacity, file) > 0, let line {
            let text = String(cString: line)
            if text.hasPrefix(prefix) {
                return Int(text.dropFirst(prefix.count).trimmingCharacters(in: .whitespacesAndNewlines))
            }
        }
        return nil
    }
}
