import Foundation

/// Owns C strings handed to libwebsockets, which keeps the pointers; frees them on deinit.
///
/// `@unchecked Sendable`: `strings` is guarded by `lock`.
final class CStringPool: @unchecked Sendable {
    private let lock = NSLock()
    private var strings: [UnsafeMutablePointer<CChar>] = []

    /// A C copy of `string` that lives as long as the pool.
    func copy(_ string: String) -> UnsafePointer<CChar> {
        let pointer = strdup(string)!
        lock.lock()
        strings.append(pointer)
        lock.unlock()
        return UnsafePointer(pointer)
    }

    deinit {
        strings.forEach { free($0) }
    }
}

/// Reads lws header values and other C strings.
enum CText {
    /// A Swift string from `length` bytes at `pointer`, decoding invalid UTF-8 leniently.
    static func string(_ pointer: UnsafeRawPointer?, length: Int) -> String {
        guard let pointer, length > 0 else { return "" }
        let bytes = UnsafeRawBufferPointer(start: pointer, count: length)
        return String(decoding: bytes, as: UTF8.self)
    }
}
