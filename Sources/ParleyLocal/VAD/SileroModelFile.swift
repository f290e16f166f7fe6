import Foundation

/// The tensors of a Silero VAD model in whisper.cpp's ggml format (`ggml-silero-*.bin`), read
/// into Float32 arrays.
///
/// The file is a `ggml` magic, the model type and version, the window and context lengths, the
/// encoder's channel and kernel sizes, the LSTM sizes, and then tensors: dimension count, name
/// length, element type (0 = Float32, 1 = Float16), dimensions (innermost first), name, data.
/// Every length and size is checked against the bytes present before anything is allocated.
struct SileroModelFile {
    /// One tensor: its dimensions (innermost first) and its values.
    struct Tensor {
        var shape: [Int]
        var values: [Float]
    }

    /// A file that is not a Silero model this code understands, with the reason.
    struct FormatError: Error, CustomStringConvertible {
        var reason: String
        var description: String { "not a whisper.cpp Silero VAD model: \(reason)" }
    }

    /// Samples per window the model was exported for (512 at 16 kHz).
    var windowLength: Int
    /// Tensors by name.
    var tensors: [String: Tensor]

    /// Parses `data`, the whole model file.
    init(data: Data) throws {
        var reader = Reader(bytes: [UInt8](data))
        guard try reader.uint32() == 0x6767_6D6C else { throw FormatError(reason: "bad magic") }
        let typeLength = try reader.count(limit: 256)
        let type = String(decoding: try reader.bytes(typeLength), as: UTF8.self)
        guard type.hasPrefix("silero") else { throw FormatError(reason: "model type \(type)") }
        _ = try (reader.int32(), reader.int32(), reader.int32())  // version
        windowLength = try reader.count(limit: 1 << 16)
        _ = try reader.int32()  // context samples
        let encoderLayers = try reader.count(limit: 16)
        for _ in 0..<encoderLayers { _ = try (reader.int32(), reader.int32(), reader.int32()) }
        for _ in 0..<4 { _ = try reader.int32() }  // LSTM input and hidden size, final conv in and out

        tensors = [:]
        while !reader.isAtEnd {
            let dimensionCount = try reader.count(limit: 4)
            let nameLength = try reader.count(limit: 256)
            let elementType = try reader.int32()
            guard elementType == 0 || elementType == 1 else {
                throw FormatError(reason: "element type \(elementType)")
            }
            var shape: [Int] = []
            for _ in 0..<dimensionCount { shape.append(try reader.count(limit: 1 << 20)) }
            let name = String(decoding: try reader.bytes(nameLength), as: UTF8.self)
            let elements = shape.reduce(1, *)
            let bytes = try reader.bytes(elements * (elementType == 0 ? 4 : 2))
            tensors[name] = Tensor(shape: shape, values: Self.floats(bytes, halfPrecision: elementType == 1))
        }
    }

    /// The tensor `name` with `count` values, or an error naming it.
    func values(_ name: String, count: Int) throws -> [Float] {
        guard let tensor = tensors[name] else { throw FormatError(reason: "no tensor \(name)") }
        guard tensor.values.count == count else {
            throw FormatError(reason: "tensor \(name) has \(tensor.values.count) values, expected \(count)")
        }
        return tensor.values
    }

    private static func floats(_ bytes: ArraySlice<UInt8>, halfPrecision: Bool) -> [Float] {
        bytes.withUnsafeBytes { raw in
            if halfPrecision {
                return (0..<raw.count / 2).map {
                    Float(Float16(bitPattern: UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 2, as: UInt16.self))))
                }
            }
            return (0..<raw.count / 4).map {
                Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self)))
            }
        }
    }

    /// Little-endian reading with bounds checks.
    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var isAtEnd: Bool { offset >= bytes.count }

        mutating func bytes(_ count: Int) throws -> ArraySlice<UInt8> {
            guard count >= 0, count <= bytes.count - offset else { throw FormatError(reason: "truncated at byte \(offset)") }
            defer { offset += count }
            return bytes[offset..<offset + count]
        }

        mutating func uint32() throws -> UInt32 {
            try bytes(4).reversed().reduce(0) { $0 << 8 | UInt32($1) }
        }

        mutating func int32() throws -> Int32 {
            Int32(bitPattern: try uint32())
        }

        /// A non-negative size no larger than `limit`.
        mutating func count(limit: Int) throws -> Int {
            let value = Int(try int32())
            guard (0...limit).contains(value) else { throw FormatError(reason: "size \(value) at byte \(offset - 4)") }
            return value
        }
    }
}
