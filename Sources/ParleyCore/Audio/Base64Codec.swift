import Foundation

/// Base64 (RFC 4648, standard alphabet, `=` padding) written for audio throughput.
///
/// The realtime protocol carries every audio chunk as base64 text, so this sits on the hot
/// path of every session. It works on unsafe buffers with lookup tables instead of
/// Foundation's per-byte paths. Decoding accepts padded and unpadded text and rejects
/// anything else (including whitespace) with the offset of the first bad character.
public enum Base64Codec {
    /// The number of characters `byteCount` bytes encode to, padding included.
    public static func encodedLength(byteCount: Int) -> Int { (byteCount + 2) / 3 * 4 }

    /// Encodes raw bytes as padded base64 text.
    public static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        let length = encodedLength(byteCount: bytes.count)
        guard length > 0 else { return "" }
        return String(unsafeUninitializedCapacity: length) { output in
            encode(bytes, into: output.baseAddress!)
            return length
        }
    }

    /// Encodes `data` as padded base64 text.
    public static func encode(_ data: Data) -> String {
        data.withUnsafeBytes { encode($0) }
    }

    /// Encodes `bytes` as padded base64 text.
    public static func encode(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { encode($0) }
    }

    /// Decodes base64 text into bytes.
    /// - Throws: `AudioError.invalidBase64` with the UTF-8 offset of the first character that is
    ///   not base64, or of the dangling character when the length cannot be base64.
    public static func decode(_ text: String) throws(AudioError) -> [UInt8] {
        try decode(text, as: UInt8.self)
    }

    /// Decodes base64 text straight into the memory of an array of `Element` (host byte order).
    /// - Throws: `AudioError.invalidBase64`, or `AudioError.oddByteCount` when the bytes are not
    ///   a whole number of elements.
    static func decode<Element: BitwiseCopyable>(_ text: String, as _: Element.Type) throws(AudioError) -> [Element] {
        var text = text
        let decoded: Result<[Element], AudioError> = text.withUTF8 { utf8 in
            let layout: Layout
            switch Layout.measure(utf8) {
            case .success(let value): layout = value
            case .failure(let error):
                let offset = decodingTable.withUnsafeBufferPointer { firstInvalid(in: utf8, from: 0, table: $0.baseAddress!) }
                return .failure(offset < utf8.count ? .invalidBase64(offset: offset) : error)
            }
            let stride = MemoryLayout<Element>.stride
            guard layout.byteCount % stride == 0 else { return .failure(.oddByteCount(layout.byteCount)) }
            var failure: Int?
            let elements = [Element](unsafeUninitializedCapacity: layout.byteCount / stride) { buffer, count in
                failure = buffer.withMemoryRebound(to: UInt8.self) { bytes in
                    decode(utf8, layout: layout, into: bytes.baseAddress)
                }
                count = failure == nil ? layout.byteCount / stride : 0
            }
            return failure.map { .failure(.invalidBase64(offset: $0)) } ?? .success(elements)
        }
        return try decoded.get()
    }

    /// Where the payload of a base64 text ends and how many bytes it holds.
    struct Layout {
        /// Characters before the padding.
        var characterCount: Int
        /// Bytes the characters decode to.
        var byteCount: Int

        /// Measures `utf8`, failing when its length cannot be base64.
        static func measure(_ utf8: UnsafeBufferPointer<UInt8>) -> Result<Layout, AudioError> {
            var characterCount = utf8.count
            if characterCount % 4 == 0, characterCount > 0, utf8[characterCount - 1] == UInt8(ascii: "=") {
                characterCount -= 1
                if utf8[characterCount - 1] == UInt8(ascii: "=") { characterCount -= 1 }
            }
            let remainder = characterCount % 4
            guard remainder != 1 else { return .failure(.invalidBase64(offset: characterCount - 1)) }
            let byteCount = characterCount / 4 * 3 + (remainder == 0 ? 0 : remainder - 1)
            return .success(Layout(characterCount: characterCount, byteCount: byteCount))
        }
    }

    /// Decodes the characters of `layout` into `output` (room for `layout.byteCount` bytes).
    /// Returns the offset of the first invalid character, or `nil` on success.
    static func decode(
        _ utf8: UnsafeBufferPointer<UInt8>, layout: Layout, into output: UnsafeMutablePointer<UInt8>?
    ) -> Int? {
        guard layout.characterCount > 0, let input = utf8.baseAddress, let output else { return nil }
        return decodingTable.withUnsafeBufferPointer { table -> Int? in
            let table = table.baseAddress!
            let quadCount = layout.characterCount / 4
            var inputIndex = 0
            var outputIndex = 0
            for _ in 0..<quadCount {
                let a = table[Int(input[inputIndex])]
                let b = table[Int(input[inputIndex + 1])]
                let c = table[Int(input[inputIndex + 2])]
                let d = table[Int(input[inputIndex + 3])]
                if (a | b | c | d) & 0x80 != 0 {
                    return firstInvalid(in: utf8, from: inputIndex, table: table)
                }
                output[outputIndex] = a << 2 | b >> 4
                output[outputIndex + 1] = b << 4 | c >> 2
                output[outputIndex + 2] = c << 6 | d
                inputIndex += 4
                outputIndex += 3
            }
            let remainder = layout.characterCount - inputIndex
            guard remainder >= 2 else { return nil }
            let a = table[Int(input[inputIndex])]
            let b = table[Int(input[inputIndex + 1])]
            let c = remainder == 3 ? table[Int(input[inputIndex + 2])] : 0
            if (a | b | c) & 0x80 != 0 { return firstInvalid(in: utf8, from: inputIndex, table: table) }
            output[outputIndex] = a << 2 | b >> 4
            if remainder == 3 { output[outputIndex + 1] = b << 4 | c >> 2 }
            return nil
        }
    }

    /// The offset of the first character at or after `start` that is not in the alphabet.
    private static func firstInvalid(
        in utf8: UnsafeBufferPointer<UInt8>, from start: Int, table: UnsafePointer<UInt8>
    ) -> Int {
        var index = start
        while index < utf8.count, table[Int(utf8[index])] & 0x80 == 0 { index += 1 }
        return index
    }

    /// Writes the padded encoding of `bytes` to `output` (room for `encodedLength` bytes).
    static func encode(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutablePointer<UInt8>) {
        guard let input = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        let count = bytes.count
        var inputIndex = 0
        var outputIndex = 0
        // Each 3 bytes are two 12-bit halves; one table lookup writes both characters of a half.
        encodingPairTable.withUnsafeBufferPointer { pairs in
            let pairs = pairs.baseAddress!
            let destination = UnsafeMutableRawPointer(output)
            while inputIndex + 3 <= count {
                let triple = Int(input[inputIndex]) << 16 | Int(input[inputIndex + 1]) << 8 | Int(input[inputIndex + 2])
                destination.storeBytes(of: pairs[triple >> 12], toByteOffset: outputIndex, as: UInt16.self)
                destination.storeBytes(of: pairs[triple & 0xFFF], toByteOffset: outputIndex + 2, as: UInt16.self)
                inputIndex += 3
                outputIndex += 4
            }
        }
        let remainder = count - inputIndex
        guard remainder > 0 else { return }
        encodingTable.withUnsafeBufferPointer { table in
            let first = Int(input[inputIndex])
            let second = remainder == 2 ? Int(input[inputIndex + 1]) : 0
            let pair = first << 16 | second << 8
            output[outputIndex] = table[pair >> 18]
            output[outputIndex + 1] = table[pair >> 12 & 0x3F]
            output[outputIndex + 2] = remainder == 2 ? table[pair >> 6 & 0x3F] : UInt8(ascii: "=")
            output[outputIndex + 3] = UInt8(ascii: "=")
        }
    }

    /// The 64 characters of the standard alphabet, by value.
    private static let encodingTable: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8
    )

    /// For every 12-bit value, its two characters as they lie in memory (first one first).
    private static let encodingPairTable: [UInt16] = (0..<4096).map { value in
        (UInt16(encodingTable[value >> 6]) | UInt16(encodingTable[value & 0x3F]) << 8).littleEndian
    }

    /// The value of each byte as a base64 character, or `0xFF` when it is not one.
    private static let decodingTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in encodingTable.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()
}
