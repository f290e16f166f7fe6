import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Makes a crash of `parley serve` visible at the next start.
///
/// While the server runs, its data directory holds a marker (`serve.running`: the process id
/// and start time) and the last event-log lines in a memory-mapped ring (`last-events.log`).
/// The ring lives in the page cache, so what was written before a crash is in the file even
/// when the process dies without a chance to flush anything. A clean shutdown removes the
/// marker; a start that finds it (left by a process no longer alive) reports the earlier run
/// as crashed, with the events it wrote last. The backtrace itself is the Swift runtime's: it
/// prints it on standard error, the server's log, before the process ends.
///
/// ```swift
/// let journal = try CrashJournal.open(in: dataDirectory)
/// if let crash = journal.previousCrash { print(crash.report) }
/// let log = EventLog { line in stderr(line); journal.record(line) }
/// // … serve …
/// journal.closeCleanly()
/// ```
public final class CrashJournal: @unchecked Sendable {  // `lock` guards the ring's bytes and `written`.
    /// An earlier run that ended without shutting down.
    public struct PreviousCrash: Sendable, Equatable {
        /// The process id of that run.
        public var processID: Int32
        /// When it started, as written in its marker.
        public var started: String
        /// Its last event-log lines, oldest first.
        public var lastEvents: [String]

        /// The lines `parley serve` prints about it.
        public var report: [String] {
            ["restarted after a crash: the previous run (pid \(processID), started \(started)) ended without shutting down; "
                + (lastEvents.isEmpty ? "it logged no events." : "its last \(lastEvents.count) events follow.")]
                + lastEvents.map { "  \($0)" }
        }
    }

    /// The marker's file name in the data directory.
    public static let markerName = "serve.running"
    /// The ring's file name in the data directory.
    public static let ringName = "last-events.log"
    /// Bytes of event lines the ring keeps (the last few hundred lines).
    static let capacity = 64 * 1024
    /// The ring's header: the count of bytes ever written, little-endian.
    static let headerSize = 8
    /// The most events a crash report shows.
    static let reportedEvents = 40

    /// The earlier run this start found crashed, if any.
    public let previousCrash: PreviousCrash?

    private let lock = NSLock()
    private let markerURL: URL
    private let ring: UnsafeMutableRawPointer
    private var written: UInt64

    private init(markerURL: URL, ring: UnsafeMutableRawPointer, previousCrash: PreviousCrash?) {
        self.markerURL = markerURL
        self.ring = ring
        self.previousCrash = previousCrash
        written = 0
    }

    deinit {
        munmap(ring, Self.headerSize + Self.capacity)
    }

    /// Opens the journal in `directory` (created when missing): reads what an earlier crashed
    /// run left, then starts this run's marker and an empty ring.
    /// - Throws: `CocoaError` or `POSIXError` when the directory or its files cannot be written.
    public static func open(in directory: URL, processID: Int32 = getpid(), now: Date = Date()) throws -> CrashJournal {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let markerURL = directory.appendingPathComponent(markerName)
        let ringURL = directory.appendingPathComponent(ringName)
        var crash: PreviousCrash?
        if let marker = try? String(contentsOf: markerURL, encoding: .utf8) {
            let fields = marker.split(separator: " ", maxSplits: 1).map(String.init)
            if let pid = fields.first.flatMap({ Int32($0) }), pid != processID, !isAlive(pid) {
                let lastEvents = (try? Data(contentsOf: ringURL)).map(lines(inRing:)) ?? []
                crash = PreviousCrash(
                    processID: pid, started: fields.count > 1 ? fields[1].trimmingCharacters(in: .whitespacesAndNewlines) : "unknown",
                    lastEvents: Array(lastEvents.suffix(reportedEvents))
                )
            }
        }
        let descriptor = Glibc.open(ringURL.path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        let size = headerSize + capacity
        guard ftruncate(descriptor, off_t(size)) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        let mapped = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0)
        guard let mapped, mapped != MAP_FAILED else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .ENOMEM) }
        try "\(processID) \(EventLog.timestamp(now))\n".write(to: markerURL, atomically: true, encoding: .utf8)
        return CrashJournal(markerURL: markerURL, ring: mapped, previousCrash: crash)
    }

    /// Keeps `line` (one event-log line, no newline) among the last events.
    public func record(_ line: String) {
        var bytes = Array(line.utf8.prefix(Self.capacity - 1))
        bytes.append(UInt8(ascii: "\n"))
        lock.withLock {
            let body = ring + Self.headerSize
            var position = Int(written % UInt64(Self.capacity))
            var remaining = bytes[...]
            while !remaining.isEmpty {
                let chunk = remaining.prefix(Self.capacity - position)
                chunk.withUnsafeBytes { (body + position).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                remaining = remaining.dropFirst(chunk.count)
                position = (position + chunk.count) % Self.capacity
            }
            written += UInt64(bytes.count)
            ring.storeBytes(of: written.littleEndian, as: UInt64.self)
        }
    }

    /// Marks this run as ended cleanly: the next start reports no crash.
    public func closeCleanly() {
        try? FileManager.default.removeItem(at: markerURL)
    }

    /// The whole lines a ring file holds, oldest first (a line the ring overwrote in part is dropped).
    static func lines(inRing file: Data) -> [String] {
        guard file.count == headerSize + capacity else { return [] }
        let written = file.prefix(headerSize).enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        let body = file.dropFirst(headerSize)
        let ordered: Data
        var droppingFirstLine = false
        if written <= UInt64(capacity) {
            ordered = Data(body.prefix(Int(written)))
        } else {
            let start = body.startIndex + Int(written % UInt64(capacity))
            ordered = Data(body[start...]) + Data(body[..<start])
            droppingFirstLine = true
        }
        var lines = String(decoding: ordered, as: UTF8.self).split(separator: "\n").map(String.init)
        if droppingFirstLine, !lines.isEmpty { lines.removeFirst() }
        return lines
    }

    /// Whether a process with id `pid` exists.
    private static func isAlive(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || errno == EPERM
    }
}
