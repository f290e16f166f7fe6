import Foundation

/// Applies a noise suppressor only while the input is noisy: suppression that helps speech in
/// noise costs clean speech a word now and then (Whisper tiny.en on flite's sentences: 1 word
/// more in 80), so audio whose estimated signal-to-noise ratio is high, or whose noise floor is
/// below −60 dBFS, passes as it came.
///
/// The estimate compares a slow peak of the frames' power (the speech level) with a slow
/// minimum (the noise floor). The inner suppressor hears every frame either way, so its own
/// noise estimate is ready the moment it is needed.
///
/// ```swift
/// var suppressor = LowSNRNoiseSuppressor(SpeexNoiseSuppressor(kind: .nearField, frameLength: 512, sampleRate: 16_000))
/// suppressor.suppress(&frame)
/// ```
public struct LowSNRNoiseSuppressor<Inner: NoiseSuppressor>: NoiseSuppressor {
    /// Below this estimated SNR the suppressor's output is used.
    public static var applyBelowDB: Double { 25 }
    /// Above this estimated SNR the input passes as it came (the gap is the hysteresis).
    public static var bypassAboveDB: Double { 30 }

    private var inner: Inner
    /// Frame power the noise floor and the speech level start from (about −100 dBFS).
    private static var silentPower: Double { 1e-10 }
    /// A noise floor below this power (−60 dBFS) is too quiet to need suppressing.
    private static var quietPower: Double { 1e-6 }
    private var noiseFloor: Double?
    private var speechLevel = silentPower
    /// Whether the suppressor's output is in use.
    public private(set) var isSuppressing = false

    /// Wraps `inner`.
    public init(_ inner: Inner) { self.inner = inner }

    /// The estimated signal-to-noise ratio in dB.
    public var estimatedSNR: Double {
        10 * log10(speechLevel / max(noiseFloor ?? Self.silentPower, Self.silentPower))
    }

    public mutating func suppress(_ frame: inout [Float]) {
        let power = max(frame.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(frame.count, 1)), Self.silentPower)
        // The floor follows quiet frames at once and rises slowly (about 3 dB a second at
        // 32 ms frames); the level follows loud frames at once and decays slowly.
        noiseFloor = min(power, (noiseFloor ?? power) * 1.02)
        speechLevel = max(power, speechLevel * 0.995)
        var cleaned = frame
        inner.suppress(&cleaned)
        let snr = estimatedSNR
        if (noiseFloor ?? 0) < Self.quietPower || snr > Self.bypassAboveDB {
            isSuppressing = false
        } else if snr < Self.applyBelowDB {
            isSuppressing = true
        }
        if isSuppressing { frame = cleaned }
    }
}
