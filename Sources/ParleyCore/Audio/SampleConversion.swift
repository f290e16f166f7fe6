import Foundation

/// Conversions between sample encodings and channel layouts, done one way everywhere.
///
/// Float samples are in `[-1, 1]`; 16-bit samples map with a scale of 32768, so a round trip
/// 16-bit → float → 16-bit is exact. Float → 16-bit rounds to nearest, clips, and maps NaN to 0.
public enum SampleConversion {
    /// Converts 16-bit samples to floats in `[-1, 1)`.
    public static func float(_ samples: [Int16]) -> [Float] {
        [Float](unsafeUninitializedCapacity: samples.count) { output, count in
            samples.withUnsafeBufferPointer { input in
                for index in input.indices { output[index] = Float(input[index]) * (1 / 32768) }
            }
            count = samples.count
        }
    }

    /// Converts float samples to 16-bit, rounding to nearest and clipping to the 16-bit range.
    public static func pcm16(_ samples: [Float]) -> [Int16] {
        [Int16](unsafeUninitializedCapacity: samples.count) { output, count in
            samples.withUnsafeBufferPointer { input in
                for index in input.indices { output[index] = pcm16(input[index]) }
            }
            count = samples.count
        }
    }

    /// Converts one float sample to 16-bit, rounding to nearest and clipping; NaN becomes 0.
    @inline(__always)
    public static func pcm16(_ sample: Float) -> Int16 {
        let scaled = (sample * 32768).rounded()
        if scaled >= 32767 { return .max }
        if scaled <= -32768 { return .min }
        return scaled.isNaN ? 0 : Int16(scaled)
    }

    /// Averages interleaved channels into one; mono input is returned unchanged.
    /// A trailing partial frame is dropped.
    public static func mono(_ interleaved: [Float], channelCount: Int) -> [Float] {
        guard channelCount > 1 else { return interleaved }
        let frameCount = interleaved.count / channelCount
        let scale = 1 / Float(channelCount)
        return [Float](unsafeUninitializedCapacity: frameCount) { output, count in
            interleaved.withUnsafeBufferPointer { input in
                for frame in 0..<frameCount {
                    var sum: Float = 0
                    for channel in 0..<channelCount { sum += input[frame * channelCount + channel] }
                    output[frame] = sum * scale
                }
            }
            count = frameCount
        }
    }
}
