import Foundation

/// The shape of a stream of audio samples: how many per second and how many channels.
///
/// All duration and sample-count arithmetic lives here so it is done one way everywhere.
public struct AudioFormat: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Samples per second per channel.
    public var sampleRate: Int
    /// Interleaved channels per frame.
    public var channelCount: Int

    /// Creates a format.
    public init(sampleRate: Int, channelCount: Int = 1) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
    }

    /// 24 kHz mono: what the OpenAI Realtime protocol carries (`audio/pcm`).
    public static let realtime = AudioFormat(sampleRate: 24_000)
    /// 16 kHz mono: what speech recognizers and VADs consume.
    public static let speech = AudioFormat(sampleRate: 16_000)

    /// Number of frames (samples per channel) in `milliseconds` of audio.
    public func frameCount(milliseconds: Int) -> Int { sampleRate * milliseconds / 1000 }

    /// Duration in milliseconds of `frameCount` frames.
    public func milliseconds(frameCount: Int) -> Int { frameCount * 1000 / max(sampleRate, 1) }

    /// Duration in seconds of `frameCount` frames.
    public func seconds(frameCount: Int) -> Double { Double(frameCount) / Double(max(sampleRate, 1)) }

    /// Number of bytes of 16-bit PCM for `frameCount` frames.
    public func pcm16ByteCount(frameCount: Int) -> Int { frameCount * channelCount * 2 }

    public var description: String { "\(sampleRate) Hz, \(channelCount) ch" }
}
