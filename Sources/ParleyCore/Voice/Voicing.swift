import Foundation

/// Whether a frame of audio is voiced: the vocal folds vibrating, as in every vowel and in
/// "mm", "yeah", "wait" or "stop". Coughs, clicks, knocks, breath and hiss are turbulent noise
/// without a steady pitch, so sound that is loud enough for the VAD but never voiced is not
/// speech, whatever a recognizer makes of it (Whisper tends to hear "you" or "Thank you." in
/// a burst of noise).
///
/// The test is the classic one of pitch trackers: the frame's normalised autocorrelation has
/// a peak at a lag inside the range of human pitch (70–400 Hz).
///
/// ```swift
/// let voiced = Voicing.isVoiced(frame, sampleRate: 16_000)
/// ```
public enum Voicing {
    /// The lowest pitch looked for, in hertz.
    public static let lowestPitchHz = 70
    /// The highest pitch looked for, in hertz.
    public static let highestPitchHz = 400
    /// The autocorrelation peak from which a frame counts as voiced. Vowels of flite and
    /// eSpeak voices reach 0.8–0.95, and still 0.6 under white noise at 5 dB SNR; low-passed
    /// noise bursts (coughs) stay under 0.3.
    public static let periodicityThreshold: Float = 0.5
    /// Frames quieter than this RMS (about −60 dBFS) are never voiced.
    public static let minimumLevel: Float = 0.001

    /// How periodic `frame` is: the highest normalised autocorrelation at a pitch lag, 0…1.
    public static func periodicity(of frame: [Float], sampleRate: Int) -> Float {
        let shortestLag = max(1, sampleRate / highestPitchHz)
        // At least two periods must fit for a lag to be judged.
        let longestLag = min(sampleRate / lowestPitchHz, frame.count / 2)
        guard shortestLag < longestLag else { return 0 }
        let energy = frame.reduce(Float(0)) { $0 + $1 * $1 }
        guard (energy / Float(frame.count)).squareRoot() >= minimumLevel else { return 0 }
        // cumulative[i]: the energy of the first i samples, for the energies either side of a lag.
        var cumulative = [Float](repeating: 0, count: frame.count + 1)
        for index in frame.indices { cumulative[index + 1] = cumulative[index] + frame[index] * frame[index] }
        var best: Float = 0
        frame.withUnsafeBufferPointer { samples in
            for lag in shortestLag...longestLag {
                let count = samples.count - lag
                var product: Float = 0
                for index in 0..<count { product += samples[index] * samples[index + lag] }
                let head = cumulative[count]
                let tail = cumulative[samples.count] - cumulative[lag]
                let normaliser = (head * tail).squareRoot()
                if normaliser > 0 { best = max(best, product / normaliser) }
            }
        }
        return best
    }

    /// Whether `frame` is voiced.
    public static func isVoiced(_ frame: [Float], sampleRate: Int) -> Bool {
        periodicity(of: frame, sampleRate: sampleRate) >= periodicityThreshold
    }
}
