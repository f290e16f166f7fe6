import Foundation

/// ITU-T G.711 companding, the 8 kHz telephone audio of the realtime protocol's `audio/pcmu`
/// (μ-law, North America and Japan) and `audio/pcma` (A-law, elsewhere): one byte per sample,
/// 14 (μ-law) or 13 (A-law) bits of linear range in 8 logarithmic segments.
public enum G711 {
    /// The two laws.
    public enum Law: Sendable, Hashable {
        case muLaw
        case aLaw
    }

    /// The telephone sample rate.
    public static let sampleRate = 8_000

    /// Decodes bytes to linear 16-bit samples.
    public static func decode(_ bytes: [UInt8], law: Law) -> [Int16] {
        let table = law == .muLaw ? muLawToLinear : aLawToLinear
        return bytes.map { table[Int($0)] }
    }

    /// Encodes linear 16-bit samples to bytes.
    public static func encode(_ samples: [Int16], law: Law) -> [UInt8] {
        switch law {
        case .muLaw: samples.map(muLaw)
        case .aLaw: samples.map(aLaw)
        }
    }

    /// μ-law on the 14-bit sample: clip the magnitude, add the bias of 33, find its segment,
    /// keep 4 bits of mantissa, and invert every bit.
    static func muLaw(_ sample: Int16) -> UInt8 {
        var magnitude = Int(sample) >> 2
        let sign: Int = magnitude < 0 ? 0x80 : 0
        if magnitude < 0 { magnitude = -magnitude }
        magnitude = min(magnitude, 8_159) + 33
        var segment = 0
        while segment < 8 && magnitude >= 0x40 << segment { segment += 1 }
        // Past the last segment: the loudest code.
        if segment == 8 { return ~UInt8(sign | 0x7F) }
        let mantissa = (magnitude >> (segment + 1)) & 0x0F
        return ~UInt8(sign | segment << 4 | mantissa)
    }

    /// A-law: segment and 4 bits of mantissa of the 13-bit magnitude, with even bits inverted.
    static func aLaw(_ sample: Int16) -> UInt8 {
        var magnitude = Int(sample) >> 3
        let sign: Int = magnitude >= 0 ? 0x80 : 0
        if magnitude < 0 { magnitude = -magnitude - 1 }
        magnitude = min(magnitude, 0x0FFF)
        let code: Int
        if magnitude < 32 {
            code = magnitude >> 1
        } else {
            var exponent = 1
            while magnitude >> (exponent + 5) > 0 { exponent += 1 }
            code = exponent << 4 | (magnitude >> exponent) & 0x0F
        }
        return UInt8((sign | code) ^ 0x55)
    }

    private static let muLawToLinear: [Int16] = (0..<256).map { byte in
        let value = ~byte & 0xFF
        let exponent = (value >> 4) & 0x07
        let mantissa = value & 0x0F
        let magnitude = ((mantissa << 3) + 0x84) << exponent - 0x84
        return Int16(value & 0x80 != 0 ? -magnitude : magnitude)
    }

    private static let aLawToLinear: [Int16] = (0..<256).map { byte in
        let value = byte ^ 0x55
        let exponent = (value >> 4) & 0x07
        let mantissa = value & 0x0F
        let magnitude = exponent == 0 ? (mantissa << 4) + 8 : ((mantissa << 4) + 0x108) << (exponent - 1)
        return Int16(value & 0x80 != 0 ? magnitude : -magnitude)
    }
}
