import Foundation

/// Why bytes could not be read as a RIFF/WAVE file.
public enum WAVError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The bytes do not start with a `RIFF` … `WAVE` header.
    case notWAVE
    /// A chunk header or payload runs past the end of the data; `chunk` is its four-letter id.
    case truncated(chunk: String)
    /// No `fmt ` chunk before the end of the file.
    case missingFormatChunk
    /// No `data` chunk.
    case missingDataChunk
    /// The `data` chunk comes before the `fmt ` chunk.
    case dataBeforeFormat
    /// The `fmt ` chunk is too short for the fields its format needs.
    case invalidFormatChunk(size: Int)
    /// A format tag other than PCM (1), IEEE float (3) or extensible (0xFFFE).
    case unsupportedEncoding(formatTag: Int)
    /// An extensible format whose subformat is neither PCM nor IEEE float.
    case unsupportedExtensibleSubtype
    /// A sample size this reader does not decode (PCM 8/16/24/32 and float 32 are supported).
    case unsupportedBitDepth(bits: Int, isFloat: Bool)
    /// Zero channels, or more than `WAVFile.maximumChannelCount`.
    case invalidChannelCount(Int)
    /// A sample rate outside `WAVFile.sampleRateRange`.
    case invalidSampleRate(Int)
    /// The block alignment does not match channels × bytes per sample.
    case invalidBlockAlign(declared: Int, expected: Int)
    /// The audio bytes are not a whole number of frames.
    case partialFrame(byteCount: Int, blockAlign: Int)

    public var description: String {
        switch self {
        case .notWAVE: "not a WAV file: missing RIFF/WAVE header"
        case .truncated(let chunk): "truncated WAV file: chunk '\(chunk)' runs past the end of the data"
        case .missingFormatChunk: "WAV file has no 'fmt ' chunk"
        case .missingDataChunk: "WAV file has no 'data' chunk"
        case .dataBeforeFormat: "WAV file has its 'data' chunk before the 'fmt ' chunk"
        case .invalidFormatChunk(let size): "WAV 'fmt ' chunk is too short (\(size) bytes)"
        case .unsupportedEncoding(let tag): "unsupported WAV encoding (format tag \(tag))"
        case .unsupportedExtensibleSubtype: "unsupported WAV extensible subformat (only PCM and IEEE float)"
        case .unsupportedBitDepth(let bits, let isFloat):
            "unsupported WAV sample size: \(bits)-bit \(isFloat ? "float" : "integer")"
        case .invalidChannelCount(let count): "invalid WAV channel count \(count)"
        case .invalidSampleRate(let rate): "invalid WAV sample rate \(rate) Hz"
        case .invalidBlockAlign(let declared, let expected):
            "invalid WAV block alignment \(declared) (expected \(expected))"
        case .partialFrame(let byteCount, let blockAlign):
            "WAV audio of \(byteCount) bytes is not a whole number of \(blockAlign)-byte frames"
        }
    }
}
