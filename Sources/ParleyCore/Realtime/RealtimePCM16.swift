import Foundation

/// The audio payloads of the realtime protocol: mono pcm16, little-endian, base64.
public enum RealtimePCM16 {
    /// The base64 text of `samples`, for `response.output_audio.delta` and
    /// `input_audio_buffer.append`.
    public static func base64(_ samples: [Int16]) -> String {
        #if _endian(big)
        let samples = samples.map(\.littleEndian)
        #endif
        return samples.withUnsafeBytes { Data($0) }.base64EncodedString()
    }

    /// The samples in a base64 pcm16 payload.
    /// - Throws: `RealtimeProtocolError` `invalid_value` with `param` set to `param` when the
    ///   text is not base64 or holds an odd number of bytes.
    public static func samples(base64: String, param: String = "audio") throws(RealtimeProtocolError) -> [Int16] {
        guard let data = Data(base64Encoded: base64) else {
            throw .invalidValue(param, "the audio is not valid base64.")
        }
        guard data.count % 2 == 0 else {
            throw .invalidValue(param, "pcm16 audio needs an even number of bytes, got \(data.count).")
        }
        var samples = [Int16](repeating: 0, count: data.count / 2)
        samples.withUnsafeMutableBytes { destination in
            _ = data.copyBytes(to: destination)
        }
        #if _endian(big)
        samples = samples.map { Int16(littleEndian: $0) }
        #endif
        return samples
    }
}
