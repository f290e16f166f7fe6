import Foundation

/// Interleaved Float32 samples in `[-1, 1]` with their format: what DSP, VAD and ASR consume.
public struct FloatBuffer: Sendable, Hashable {
    /// Sample rate and channel count of `samples`.
    public var format: AudioFormat
    /// Interleaved samples.
    public var samples: [Float]

    /// Wraps samples already in memory.
    public init(format: AudioFormat, samples: [Float]) {
        self.format = format
        self.samples = samples
    }

    /// Converts 16-bit samples (exactly; converting back gives the same integers).
    public init(_ buffer: PCM16Buffer) {
        self.init(format: buffer.format, samples: SampleConversion.float(buffer.samples))
    }

    /// Frames (samples per channel) in the buffer.
    public var frameCount: Int { samples.count / max(format.channelCount, 1) }

    /// Duration in milliseconds, rounded down.
    public var durationMilliseconds: Int { format.milliseconds(frameCount: frameCount) }

    /// The buffer with its channels averaged into one.
    public func mixedToMono() -> FloatBuffer {
        FloatBuffer(
            format: AudioFormat(sampleRate: format.sampleRate, channelCount: 1),
            samples: SampleConversion.mono(samples, channelCount: format.channelCount)
        )
    }
}
