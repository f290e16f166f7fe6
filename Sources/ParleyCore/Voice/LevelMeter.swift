import Foundation

/// Measures how loud audio is, frame by frame: RMS and peak in dBFS for meters, and a
/// smoothed 0…1 level with separate attack and release for a voice-reactive UI.
///
/// Full scale is 1.0, so a full-scale sine reads −3 dBFS RMS and 0 dBFS peak.
/// Time comes from the frames themselves (their length at `sampleRate`), so readings are
/// the same whether frames arrive live or from a file.
public struct LevelMeter: Sendable {
    /// One frame's measurements.
    public struct Reading: Sendable, Hashable {
        /// Root-mean-square level in dBFS (`LevelMeter.silenceDBFS` for digital silence).
        public var rmsDBFS: Float
        /// Largest absolute sample in dBFS.
        public var peakDBFS: Float
        /// The smoothed level, 0 at `floorDBFS` or below, 1 at 0 dBFS.
        public var level: Float
    }

    /// The dBFS reported for digital silence instead of −∞.
    public static let silenceDBFS: Float = -120

    /// Sample rate of the frames, used to turn frame lengths into time.
    public var sampleRate: Int
    /// Time constant in milliseconds with which the level rises.
    public var attackMilliseconds: Double
    /// Time constant in milliseconds with which the level falls.
    public var releaseMilliseconds: Double
    /// The RMS dBFS that maps to level 0.
    public var floorDBFS: Float
    /// The current smoothed level.
    public private(set) var level: Float = 0

    /// Creates a meter.
    public init(sampleRate: Int, attackMilliseconds: Double = 20, releaseMilliseconds: Double = 250, floorDBFS: Float = -60) {
        self.sampleRate = sampleRate
        self.attackMilliseconds = attackMilliseconds
        self.releaseMilliseconds = releaseMilliseconds
        self.floorDBFS = floorDBFS
    }

    /// Measures one mono frame and advances the smoothed level by the frame's duration.
    public mutating func process(_ frame: [Float]) -> Reading {
        let rmsDBFS = Self.dBFS(amplitude: Self.rms(frame))
        let peakDBFS = Self.dBFS(amplitude: Self.peak(frame))
        let target = min(max((rmsDBFS - floorDBFS) / -floorDBFS, 0), 1)
        let seconds = Double(frame.count) / Double(max(sampleRate, 1))
        let timeConstant = (target > level ? attackMilliseconds : releaseMilliseconds) / 1000
        let keep = timeConstant > 0 ? Float(exp(-seconds / timeConstant)) : 0
        level = target + (level - target) * keep
        return Reading(rmsDBFS: rmsDBFS, peakDBFS: peakDBFS, level: level)
    }

    /// Returns the smoothed level to 0.
    public mutating func reset() { level = 0 }

    /// Root-mean-square amplitude of `samples` (0 for none).
    public static func rms(_ samples: [Float]) -> Float {
        rms(samples[...])
    }

    /// Root-mean-square amplitude of part of a buffer (0 for none).
    public static func rms(_ samples: ArraySlice<Float>) -> Float {
        guard !samples.isEmpty else { return 0 }
        return samples.withUnsafeBufferPointer { buffer in
            var sum: Float = 0
            for sample in buffer { sum += sample * sample }
            return (sum / Float(buffer.count)).squareRoot()
        }
    }

    /// Largest absolute sample of `samples` (0 for none).
    public static func peak(_ samples: [Float]) -> Float {
        samples.withUnsafeBufferPointer { buffer in
            var largest: Float = 0
            for sample in buffer { largest = max(largest, abs(sample)) }
            return largest
        }
    }

    /// An amplitude (1.0 = full scale) in dBFS, never below `silenceDBFS`.
    public static func dBFS(amplitude: Float) -> Float {
        guard amplitude > 0 else { return silenceDBFS }
        return max(20 * log10(amplitude), silenceDBFS)
    }
}
