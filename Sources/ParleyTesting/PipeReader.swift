import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads a child's output pipe to its end on a thread of its own, handing every chunk to a
/// closure as it arrives.
///
/// Why not `FileHandle.readabilityHandler`: on Linux it watches the descriptor with a dispatch
/// source whose cancellation is asynchronous; when the pipe's `FileHandle` is released before
/// the cancellation has gone through, the descriptor is closed under the source and
/// libdispatch's event loop crashes (`_dispatch_source_refs_finalize_unregistration`). A
/// blocking `read` on a dedicated thread that keeps the handle alive until the end cannot.
///
/// ```swift
/// let reader = PipeReader(pipe.fileHandleForReading) { chunk in collected.append(chunk) }
/// await reader.end()
/// ```
public final class PipeReader: @unchecked Sendable {  // `lock` guards `finished` and `waiters`.
    private let lock = NSLock()
    private var finished = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Starts reading `handle` at once; `onData` is called on the reading thread, in order, and
    /// `onEnd` once after the last chunk. Start it after the child has been launched, so the
    /// pipe's writing end is the child's alone.
    public init(_ handle: FileHandle, onData: @escaping @Sendable (Data) -> Void, onEnd: @escaping @Sendable () -> Void = {}) {
        Thread.detachNewThread { [self] in
            withExtendedLifetime(handle) {
                var buffer = [UInt8](repeating: 0, count: 64 * 1024)
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
                    if count > 0 {
                        onData(Data(buffer[..<count]))
                    } else if count < 0, errno == EINTR {
                        continue
                    } else {
                        break
                    }
                }
            }
            onEnd()
            let waiting = lock.withLock {
                finished = true
                defer { waiters = [] }
                return waiters
            }
            for waiter in waiting { waiter.resume() }
        }
    }

    /// The lines of `handle` (without their newlines) as they arrive; the stream finishes at the
    /// end of the pipe, after a last unterminated line if there is one.
    public static func lines(of handle: FileHandle) -> AsyncStream<String> {
        let (lines, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(10_000))
        let pending = LockedData()
        _ = PipeReader(handle, onData: { chunk in
            for line in pending.appendTakingLines(chunk) { continuation.yield(line) }
        }, onEnd: {
            let tail = pending.takeAll()
            if !tail.isEmpty { continuation.yield(String(decoding: tail, as: UTF8.self)) }
            continuation.finish()
        })
        return lines
    }

    /// Whether the end of the pipe has been read.
    public var isFinished: Bool { lock.withLock { finished } }

    /// Returns once everything up to the end of the pipe has been handed to `onData`.
    public func end() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = lock.withLock {
                if !finished { waiters.append(continuation) }
                return finished
            }
            if done { continuation.resume() }
        }
    }
}

/// Bytes not yet split into lines. `@unchecked Sendable`: `bytes` is guarded by `lock`.
private final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var bytes = Data()

    /// Appends `chunk` and removes and returns every complete line.
    func appendTakingLines(_ chunk: Data) -> [String] {
        lock.withLock {
            bytes.append(chunk)
            var lines: [String] = []
            while let newline = bytes.firstIndex(of: 0x0A) {
                lines.append(String(decoding: bytes[bytes.startIndex..<newline], as: UTF8.self))
                bytes.removeSubrange(bytes.startIndex...newline)
            }
            return lines
        }
    }

    /// Removes and returns what is left.
    func takeAll() -> Data {
        lock.withLock {
            defer { bytes = Data() }
            return bytes
        }
    }
}
