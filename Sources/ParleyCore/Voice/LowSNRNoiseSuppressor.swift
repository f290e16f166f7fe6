import Foundation

/// Applies a noise suppressor only while the input is noisy with a steady noise: suppression
/// that helps speech in noise costs clean speech a word now and then (Whisper tiny.en on
/// flite's sentences: 1 word more in 80), and speexdsp's spectral subtraction learns a steady
/// noise (hiss, a fan, an engine) but not babble or music, where what it takes away changes
/// Whisper's words at random. Audio whose estimated signal-to-noise ratio is high, whose noise
/// floor is below −60 dBFS, or whose quietest frames are not steady (`NoiseSteadiness`)
/// passes as it came.
///
/// The estimate compares a slow peak of the frames' power (the speech level) with a slow
/// minimum (the noise floor), and decides nothing before it has heard `settlingFrames` frames
/// of sound. Digital silence (below −90 dBFS: a client sending zeros before its microphone
/// opens, or between turns) is no sound: it says nothing about the room's noise, and a floor
/// learned from it would take half a minute to rise to the noise that follows. The inner
/// suppressor hears every frame either way, so its own noise estimate is ready the moment it
/// is needed.
///
/// ```swift
/// var suppressor = LowSNRNoiseSuppressor(SpeexNoiseSuppressor(kind: .nearField, frameLength: 512, sampleRate: 16_000))
/// suppressor.suppress(&frame)
/// ```
public struct LowSNRNoiseSuppressor<Inner: NoiseSuppressor>: NoiseSuppressor {
    /// Below this estimated SNR the suppressor's output is used. On the turn corpus the
    /// estimate ends at 11–20 dB under white noise at 5 dB SNR and 16–24 dB at 10 dB; for clean
    /// synthetic speech, with no room noise under it, it is the speech's own range, 25–60 dB.
    public static var applyBelowDB: Double { 20 }
    /// Above this estimated SNR the input passes as it came (the gap is the hysteresis).
    public static var bypassAboveDB: Double { 25 }
    /// The most the quietest frames may spread (`NoiseSteadiness`) for the noise to count as
    /// steady: only steady noise is suppressed. White noise spreads 0.2–0.7 dB; six talkers'
    /// babble 2 dB in its first second and more after.
    public static var steadyNoiseSpreadDB: Double { 1.5 }

    private var inner: Inner
    /// Frame power the noise floor and the speech level start from (about −100 dBFS).
    private static var silentPower: Double { 1e-10 }
    /// A noise floor below this power (−60 dBFS) is too quiet to need suppressing.
    private static var quietPower: Double { 1e-6 }
    /// Frames below this power (−90 dBFS) are digital silence, not sound.
    private static var digitalSilencePower: Double { 1e-9 }
    /// Frames of sound heard before the estimate decides anything: a second of 32 ms frames,
    /// time for the floor to find a gap between words and for the steadiness to be known.
    public static var settlingFrames: Int { NoiseSteadiness.minimumFrames }
    private var noiseFloor: Double?
    private var speechLevel = silentPower
    private var framesOfSound = 0
    private var steadiness = NoiseSteadiness()
    /// Whether the suppressor's output is in use.
    public private(set) var isSuppressing = false

    /// Wraps `inner`.
    public init(_ inner: Inner) { self.inner = inner }

    /// Whether the quietest recent frames are those of a steady noise.
    private var isSteady: Bool { (steadiness.spreadDB ?? .infinity) <= Self.steadyNoiseSpreadDB }

    /// The estimated signal-to-noise ratio in dB.
    public var estimatedSNR: Double {
        10 * log10(speechLevel / max(noiseFloor ?? Self.silentPower, Self.silentPower))
    }

    public mutating func suppress(_ frame: inout [Float]) {
        let power = max(frame.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(frame.count, 1)), Self.silentPower)
        if power >= Self.digitalSilencePower {
            // The floor follows quiet frames at once and rises slowly (about 3 dB a second at
            // 32 ms frames); the level follows loud frames at once and decays slowly.
            noiseFloor = min(power, (noiseFloor ?? power) * 1.02)
            speechLevel = max(power, speechLevel * 0.995)
            steadiness.add(power: power)
            framesOfSound += 1
        }
        var cleaned = frame
        inner.suppress(&cleaned)
        guard framesOfSound >= Self.settlingFrames else { return }
        let snr = estimatedSNR
        // The steadiness (a sort of the last three seconds' frames) is asked last, only of
        // input noisy enough to suppress.
        if (noiseFloor ?? 0) < Self.quietPower || snr > Self.bypassAboveDB || !isSteady {
            isSuppressing = false
        } else if snr < Self.applyBelowDB {
            isSuppressing = true
        }
        if isSuppressing { frame = cleaned }
    }
}
