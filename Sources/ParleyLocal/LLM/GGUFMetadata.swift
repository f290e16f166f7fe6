import Foundation

/// What a GGUF model file says about itself, read from its header: enough to run it well
/// without asking the user (`parley serve --llm-model PATH`).
///
/// GGUF (little-endian): magic `GGUF`, a version (2 or 3), the tensor count and the key/value
/// count (64-bit), then each key (a 64-bit length and UTF-8 bytes), a 32-bit value type and the
/// value. Arrays (the vocabulary) are skipped without being read into memory.
public struct GGUFMetadata: Sendable, Hashable {
    /// `general.name`, when the file has one.
    public var name: String?
    /// `general.architecture` (`llama`, `qwen2`, `gemma3`, …).
    public var architecture: String?
    /// `<architecture>.context_length`: the context the model was trained for.
    public var contextLength: Int?
    /// Whether the file carries its chat template (`tokenizer.chat_template`).
    public var hasChatTemplate: Bool

    /// A file that is not a GGUF model Parley can read.
    public struct ReadError: Error, CustomStringConvertible, Equatable {
        public var description: String
    }

    /// Reads the header of the file at `path`.
    /// - Throws: `ReadError` naming what is wrong (not a GGUF file, an unknown version or value
    ///   type, a truncated header).
    public init(path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ReadError(description: "\(path) cannot be read")
        }
        defer { try? handle.close() }
        var reader = HeaderReader(handle: handle)
        guard try reader.bytes(4) == Data("GGUF".utf8) else {
            throw ReadError(description: "\(path) is not a GGUF model (no GGUF magic)")
        }
        let version = try reader.integer(UInt32.self)
        guard version == 2 || version == 3 else {
            throw ReadError(description: "\(path): GGUF version \(version) is not supported (2 or 3)")
        }
        _ = try reader.integer(UInt64.self)  // tensors
        let count = try reader.integer(UInt64.self)
        guard count < 100_000 else { throw ReadError(description: "\(path): \(count) metadata entries is not a real header") }
        var strings: [String: String] = [:]
        var integers: [String: Int] = [:]
        for _ in 0..<count {
            let key = try reader.string()
            switch try reader.value(type: try reader.integer(UInt32.self)) {
            case .string(let text): strings[key] = text
            case .integer(let number): integers[key] = number
            case .other: break
            }
        }
        name = strings["general.name"]
        architecture = strings["general.architecture"]
        contextLength = architecture.flatMap { integers["\($0).context_length"] }
        hasChatTemplate = strings["tokenizer.chat_template"] != nil
    }
}

/// Reads a GGUF header from a file, a buffered chunk at a time.
private struct HeaderReader {
    enum Value {
        case string(String)
        case integer(Int)
        case other
    }

    let handle: FileHandle
    private var buffer: [UInt8] = []
    /// Where the unread part of `buffer` starts.
    private var position = 0

    init(handle: FileHandle) { self.handle = handle }

    mutating func bytes(_ count: Int) throws -> Data {
        while buffer.count - position < count {
            buffer.removeFirst(position)
            position = 0
            guard let more = try handle.read(upToCount: max(1 << 20, count - buffer.count)), !more.isEmpty else {
                throw GGUFMetadata.ReadError(description: "the GGUF header ends early")
            }
            buffer.append(contentsOf: more)
        }
        defer { position += count }
        return Data(buffer[position..<position + count])
    }

    mutating func skip(_ count: Int) throws {
        var remaining = count
        while remaining > 0 {
            let step = min(remaining, 1 << 20)
            _ = try bytes(step)
            remaining -= step
        }
    }

    mutating func integer<T: FixedWidthInteger>(_: T.Type) throws -> T {
        let data = try bytes(MemoryLayout<T>.size)
        return data.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(as: T.self)) }
    }

    mutating func string() throws -> String {
        let length = try integer(UInt64.self)
        guard length < 64 << 20 else { throw GGUFMetadata.ReadError(description: "a GGUF string of \(length) bytes is not a real header") }
        return String(decoding: try bytes(Int(length)), as: UTF8.self)
    }

    /// Reads a value of GGUF type `type`, keeping strings and integers.
    mutating func value(type: UInt32) throws -> Value {
        switch type {
        case 0, 1, 7: return .integer(Int(try bytes(1)[0]))
        case 2, 3: return .integer(Int(try integer(UInt16.self)))
        case 4: return .integer(Int(try integer(UInt32.self)))
        case 5: return .integer(Int(try integer(Int32.self)))
        case 6: try skip(4); return .other
        case 8: return .string(try string())
        case 9:
            let elementType = try integer(UInt32.self)
            let count = try integer(UInt64.self)
            guard count < 100_000_000 else { throw GGUFMetadata.ReadError(description: "a GGUF array of \(count) items is not a real header") }
            for _ in 0..<count { _ = try value(type: elementType) }
            return .other
        case 10: return .integer(Int(truncatingIfNeeded: try integer(UInt64.self)))
        case 11: return .integer(Int(try integer(Int64.self)))
        case 12: try skip(8); return .other
        default: throw GGUFMetadata.ReadError(description: "GGUF value type \(type) is unknown")
        }
    }
}
