import Foundation

extension RealtimeAudioFormat {
    /// The samples of an `input_audio_buffer.append` chunk in this format (at `sampleRate`).
    /// - Throws: `AudioError` for text that is not base64 or, for pcm16, an odd byte count.
    public func samples(base64 text: String) throws(AudioError) -> [Int16] {
        switch law {
        case nil: try PCM16Buffer(format: .realtime, base64: text).samples
        case let law?: G711.decode(try Base64Codec.decode(text), law: law)
        }
    }

    /// Samples at `sampleRate` as the base64 text of an audio delta in this format.
    public func base64(_ samples: [Int16]) -> String {
        switch law {
        case nil: PCM16Buffer(samples: samples).base64EncodedString()
        case let law?: Base64Codec.encode(G711.encode(samples, law: law))
        }
    }
}

extension RealtimeAudioFormat {
    /// How long the audio in a base64 delta of this format plays, in milliseconds (read from
    /// the text's length, without decoding it).
    public func milliseconds(ofBase64 text: String) -> Double {
        let characters = text.utf8.count
        let padding = text.utf8.reversed().prefix(2).prefix { $0 == UInt8(ascii: "=") }.count
        let bytes = characters / 4 * 3 - padding
        let bytesPerSample = law == nil ? 2 : 1
        return Double(bytes / bytesPerSample) * 1_000 / Double(sampleRate)
    }
}
