import CLibWebsockets
import Foundation

/// Bytes libwebsockets needs in front of every buffer passed to `lws_write` (`LWS_PRE`).
let lwsPre = 16

/// Writes through `lws_write`, adding the `LWS_PRE` headroom it needs. Service thread only.
enum LWSWrite {
    /// Writes `bytes` with `mode`; returns `false` when lws reports the connection failed.
    static func write(_ wsi: OpaquePointer, _ bytes: Data, mode: lws_write_protocol) -> Bool {
        write(wsi, parts: [bytes], mode: mode)
    }

    /// Writes the concatenation of `parts` as one `lws_write`.
    static func write(_ wsi: OpaquePointer, parts: [Data], mode: lws_write_protocol) -> Bool {
        let length = parts.reduce(0) { $0 + $1.count }
        return withUnsafeTemporaryAllocation(byteCount: lwsPre + length, alignment: 16) { buffer in
            var offset = lwsPre
            for part in parts {
                part.withUnsafeBytes { source in
                    if let base = source.baseAddress {
                        (buffer.baseAddress! + offset).copyMemory(from: base, byteCount: source.count)
                    }
                }
                offset += part.count
            }
            let start = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self) + lwsPre
            let written = lws_write(wsi, start, length, mode)
            return written >= 0
        }
    }

    /// Writes `payload` (at most `ServiceLoop.writeBufferCapacity` bytes) through the loop's
    /// staging buffer, which provides the headroom lws needs.
    static func write(_ wsi: OpaquePointer, _ payload: UnsafeRawBufferPointer, through loop: ServiceLoop, mode: lws_write_protocol) -> Bool {
        precondition(payload.count <= ServiceLoop.writeBufferCapacity, "payload larger than the write buffer")
        let start = loop.writeBuffer + lwsPre
        if let source = payload.baseAddress { start.copyMemory(from: source, byteCount: payload.count) }
        return lws_write(wsi, start.assumingMemoryBound(to: UInt8.self), payload.count, mode) >= 0
    }

    /// Writes the payload bytes `payloadRange` of `frame`, whose first `lwsPre` bytes are
    /// headroom, without copying.
    /// lws may overwrite the `lwsPre` bytes before the range (frame header) and, on a client,
    /// mask the range in place, so the bytes before `payloadRange.upperBound` are spent after.
    static func write(_ wsi: OpaquePointer, frame: inout [UInt8], payloadRange: Range<Int>, mode: lws_write_protocol) -> Bool {
        frame.withUnsafeMutableBufferPointer { buffer in
            let start = buffer.baseAddress! + lwsPre + payloadRange.lowerBound
            return lws_write(wsi, start, payloadRange.count, mode) >= 0
        }
    }
}
