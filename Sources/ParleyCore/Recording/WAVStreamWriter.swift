import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A 16-bit PCM WAV file written as it grows. The header's sizes are rewritten after every
/// append, so a process that dies mid-call leaves a file that reads correctly up to its last
/// append; a file found longer than its header says (the process died between the two
/// writes) is repaired when it is opened again.
///
/// Not thread-safe: one owner writes (the recordings queue).
final class WAVStreamWriter {
    /// Bytes before the samples: the canonical RIFF, `fmt ` and `data` headers.
    static let headerSize = 44

    let format: AudioFormat
    private let descriptor: Int32
    /// Bytes of samples in the file.
    private(set) var dataSize: Int

    /// Opens `url` for appending: creates it with a header, or continues an existing
    /// recording of the same format (after dropping a torn last frame).
    /// - Throws: `RecordingError` when the file cannot be opened or holds another format.
    init(url: URL, format: AudioFormat) throws(RecordingError) {
        self.format = format
        let descriptor = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o640)
        guard descriptor >= 0 else { throw RecordingError("cannot open \(url.lastPathComponent): \(String(cString: strerror(errno)))") }
        self.descriptor = descriptor
        let header = [UInt8](WAVFile.pcm16Data(samples: [], format: format))
        let fileSize = Int(lseek(descriptor, 0, SEEK_END))
        if fileSize < Self.headerSize {
            dataSize = 0
            guard ftruncate(descriptor, 0) == 0, pwrite(descriptor, header, header.count, 0) == header.count else {
                close(descriptor)
                throw RecordingError("cannot write \(url.lastPathComponent): \(String(cString: strerror(errno)))")
            }
            return
        }
        var existing = [UInt8](repeating: 0, count: Self.headerSize)
        // Everything but the two sizes must be ours, byte for byte.
        let sizeFields: Set<Int> = [4, 5, 6, 7, 40, 41, 42, 43]
        guard pread(descriptor, &existing, Self.headerSize, 0) == Self.headerSize,
              (0..<Self.headerSize).allSatisfy({ sizeFields.contains($0) || existing[$0] == header[$0] }) else {
            close(descriptor)
            throw RecordingError("\(url.lastPathComponent) is not a \(format.sampleRate) Hz \(format.channelCount)-channel recording; not appending to it")
        }
        let frameBytes = 2 * format.channelCount
        dataSize = (fileSize - Self.headerSize) / frameBytes * frameBytes
        guard ftruncate(descriptor, off_t(Self.headerSize + dataSize)) == 0 else {
            close(descriptor)
            throw RecordingError("cannot repair \(url.lastPathComponent): \(String(cString: strerror(errno)))")
        }
        try writeSizes()
    }

    deinit { close(descriptor) }

    /// Appends interleaved samples, then makes the header say so.
    func append(_ samples: [Int16]) throws(RecordingError) {
        guard !samples.isEmpty else { return }
        let byteCount = samples.count * 2
        guard Self.headerSize + dataSize + byteCount <= Int(UInt32.max) else { throw RecordingError("the recording reached the 4 GB limit of WAV") }
        #if _endian(big)
        let samples = samples.map { $0.littleEndian }
        #endif
        let written = samples.withUnsafeBytes { bytes in
            pwrite(descriptor, bytes.baseAddress, byteCount, off_t(Self.headerSize + dataSize))
        }
        guard written == byteCount else { throw RecordingError("write failed: \(String(cString: strerror(errno)))") }
        dataSize += byteCount
        try writeSizes()
    }

    /// Rewrites the RIFF and data sizes for `dataSize` bytes of samples.
    private func writeSizes() throws(RecordingError) {
        let riff = UInt32(36 + dataSize).littleEndian
        let data = UInt32(dataSize).littleEndian
        let ok = withUnsafeBytes(of: riff) { pwrite(descriptor, $0.baseAddress, 4, 4) } == 4
            && withUnsafeBytes(of: data) { pwrite(descriptor, $0.baseAddress, 4, 40) } == 4
        guard ok else { throw RecordingError("header update failed: \(String(cString: strerror(errno)))") }
    }
}

/// Why a call recording stopped or could not start. The call itself goes on.
public struct RecordingError: Error, CustomStringConvertible, Sendable {
    public var description: String
    init(_ description: String) { self.description = description }
}
