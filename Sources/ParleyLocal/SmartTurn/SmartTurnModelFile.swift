import Foundation

/// The tensors of Smart Turn v3.2 as `scripts/convert-smart-turn-onnx.py` writes them from
/// pipecat's ONNX file: weights as int8 with one scale per output channel, everything else
/// Float32, each tensor named for its role ("layers.2.fc1.weight").
///
/// The file is the magic `PSTM`, a format version (1) and a tensor count, then per tensor: name
/// length, name, element type (0 = Float32, 1 = int8), dimension count, dimensions (outermost
/// first), values; all little-endian. Every size is checked against the bytes present.
struct SmartTurnModelFile {
    /// A file that is not a Smart Turn model this code understands, with the reason.
    struct FormatError: Error, CustomStringConvertible {
        var reason: String
        var description: String { "not a Parley Smart Turn model: \(reason)" }
    }

    private enum Values {
        case float([Float])
        case int8([Int8])
    }

    private var tensors: [String: (shape: [Int], values: Values)] = [:]

    /// Parses `data`, the whole model file.
    init(data: Data) throws {
        let bytes = [UInt8](data)
        var offset = 0
        func take(_ count: Int) throws -> ArraySlice<UInt8> {
            guard count >= 0, count <= bytes.count - offset else { throw FormatError(reason: "truncated at byte \(offset)") }
            defer { offset += count }
            return bytes[offset..<offset + count]
        }
        func uint32() throws -> Int { Int(try take(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }) }

        guard try take(4).elementsEqual("PSTM".utf8) else { throw FormatError(reason: "bad magic") }
        guard try uint32() == 1 else { throw FormatError(reason: "unknown format version") }
        let count = try uint32()
        for _ in 0..<count {
            let name = String(decoding: try take(try uint32()), as: UTF8.self)
            let type = try uint32()
            let dimensionCount = try uint32()
            guard type <= 1, dimensionCount <= 4 else { throw FormatError(reason: "tensor \(name): type \(type), \(dimensionCount) dimensions") }
            let shape = try (0..<dimensionCount).map { _ in try uint32() }
            let elements = shape.reduce(1, *)
            let raw = try take(elements * (type == 0 ? 4 : 1))
            let values: Values = raw.withUnsafeBytes { raw in
                type == 1
                    ? .int8(raw.map { Int8(bitPattern: $0) })
                    : .float((0..<elements).map { Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))) })
            }
            tensors[name] = (shape, values)
        }
    }

    /// The Float32 tensor `name` with `count` values.
    func floats(_ name: String, count: Int) throws -> [Float] {
        guard case .float(let values)? = tensors[name]?.values else { throw FormatError(reason: "no Float32 tensor \(name)") }
        guard values.count == count else { throw FormatError(reason: "tensor \(name) has \(values.count) values, expected \(count)") }
        return values
    }

    /// The weight `name` ([inputs][outputs] int8 with per-output scales) as Float32: the values
    /// the int8 network multiplies by.
    func weight(_ name: String, inputs: Int, outputs: Int) throws -> [Float] {
        guard case .int8(let values)? = tensors["\(name).weight"]?.values, tensors["\(name).weight"]?.shape == [inputs, outputs] else {
            throw FormatError(reason: "no \(inputs)×\(outputs) int8 tensor \(name).weight")
        }
        let scales = try floats("\(name).scales", count: outputs)
        return values.indices.map { Float(values[$0]) * scales[$0 % outputs] }
    }

    /// The scale and zero point of the 8-bit rounding named `name`.
    func rounding(_ name: String) throws -> ActivationRounding {
        let values = try floats(name, count: 2)
        guard values[0] > 0, (0...255).contains(values[1]) else { throw FormatError(reason: "rounding \(name) is \(values)") }
        return ActivationRounding(scale: values[0], zeroPoint: values[1])
    }
}
