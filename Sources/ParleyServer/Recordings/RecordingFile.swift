import Foundation
import ParleyCore

/// A recording on disk as it can be served now: its length rounded down to whole frames
/// (one may be recording still), its header's sizes made to match that length (the process
/// writing it may have died between a write and its header update).
struct RecordingFile {
    let url: URL
    /// Bytes served: the header and whole stereo frames.
    let length: Int
    /// When the file was last written to.
    let lastWritten: Date

    /// Bytes per stereo 16-bit frame.
    private static let frameBytes = 4
    private static let headerSize = 44

    /// The file at `url`, `nil` when there is none (or not even a header).
    init?(url: URL) {
        let attributes = (try? FileManager.default.attributesOfItem(atPath: url.path)) ?? [:]
        guard let size = attributes[.size] as? Int, size >= Self.headerSize, let modified = attributes[.modificationDate] as? Date else { return nil }
        self.url = url
        length = Self.headerSize + (size - Self.headerSize) / Self.frameBytes * Self.frameBytes
        lastWritten = modified
    }

    /// Milliseconds of audio.
    var durationMs: Int { (length - Self.headerSize) / Self.frameBytes * 1000 / CallRecorder.sampleRate }

    /// The bytes `range` (within `0..<length`), with the header's sizes saying `length`.
    func read(_ range: Range<Int>) throws -> Data {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(range.lowerBound))
        var data = try handle.read(upToCount: range.count) ?? Data()
        guard data.count == range.count else { throw CocoaError(.fileReadCorruptFile) }
        // Patch the two size fields where the range covers them.
        let sizes: [(offset: Int, value: UInt32)] = [(4, UInt32(length - 8)), (40, UInt32(length - Self.headerSize))]
        for (offset, value) in sizes {
            withUnsafeBytes(of: value.littleEndian) { bytes in
                for index in 0..<4 where range.contains(offset + index) {
                    data[offset + index - range.lowerBound] = bytes[index]
                }
            }
        }
        return data
    }

    /// The bytes `range` a chunk of `size` at a time, each read when the one before was taken:
    /// a long recording (about 100 KB per second of call) is never held in memory whole.
    func chunks(of range: Range<Int>, size: Int) -> AsyncStream<Data> {
        let cursor = ReadCursor(offset: range.lowerBound)
        return AsyncStream {
            guard let next = cursor.advance(by: size, within: range), let chunk = try? read(next) else { return nil }
            return chunk
        }
    }
}

/// Where a chunked read has got to. `@unchecked Sendable`: `offset` is guarded by `lock`.
private final class ReadCursor: @unchecked Sendable {
    private let lock = NSLock()
    private var offset: Int

    init(offset: Int) { self.offset = offset }

    /// The next `size` bytes within `range`, `nil` at its end.
    func advance(by size: Int, within range: Range<Int>) -> Range<Int>? {
        lock.withLock {
            guard offset < range.upperBound else { return nil }
            let next = offset..<min(offset + size, range.upperBound)
            offset = next.upperBound
            return next
        }
    }
}
