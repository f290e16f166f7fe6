import Foundation
import ParleyCore

/// A recording on disk as it can be served now: its length rounded down to whole frames
/// (one may be recording still), its header's sizes made to match that length (the process
/// writing it may have died between a write and its header update).
struct RecordingFile {
    let url: URL
    /// Bytes served: the header and whole stereo frames.
    let length: Int

    /// Bytes per stereo 16-bit frame.
    private static let frameBytes = 4
    private static let headerSize = 44

    /// The file at `url`, `nil` when there is none (or not even a header).
    init?(url: URL) {
        guard let size = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? Int, size >= Self.headerSize else { return nil }
        self.url = url
        length = Self.headerSize + (size - Self.headerSize) / Self.frameBytes * Self.frameBytes
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
}
