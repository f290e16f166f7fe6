import Foundation

/// Why audio data or an audio operation was rejected.
public enum AudioError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text is not valid base64; `offset` is the UTF-8 offset of the first offending character.
    case invalidBase64(offset: Int)
    /// 16-bit PCM needs an even number of bytes.
    case oddByteCount(Int)
    /// The sample count is not a whole number of frames for the format's channel count.
    case partialFrame(sampleCount: Int, channelCount: Int)
    /// The format cannot describe real audio (no channels, no samples per second).
    case invalidFormat(AudioFormat)
    /// Two buffers or a buffer and a consumer disagree on the format.
    case formatMismatch(expected: AudioFormat, actual: AudioFormat)
    /// A resampler could not be created or failed while running.
    case resamplerFailed(String)

    public var description: String {
        switch self {
        case .invalidBase64(let offset):
            "invalid base64 audio: unexpected character at offset \(offset)"
        case .oddByteCount(let count):
            "16-bit PCM audio must have an even number of bytes, got \(count)"
        case .partialFrame(let sampleCount, let channelCount):
            "\(sampleCount) samples are not a whole number of \(channelCount)-channel frames"
        case .invalidFormat(let format):
            "invalid audio format: \(format)"
        case .formatMismatch(let expected, let actual):
            "audio format mismatch: expected \(expected), got \(actual)"
        case .resamplerFailed(let reason):
            "resampler failed: \(reason)"
        }
    }
}
