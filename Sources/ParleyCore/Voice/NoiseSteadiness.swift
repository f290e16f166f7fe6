import Foundation

/// How steady the quietest part of the recent input is: the 10th percentile of the last three
/// seconds' frame powers above their minimum, in dB.
///
/// A steady noise (a fan, an engine, hiss) keeps its quietest frames within a decibel or two of
/// each other, and a spectral-subtraction suppressor can learn it. Babble, music, and speech
/// with nothing under it leave the quietest tenth several dB above the very quietest frame.
/// Measured on 60 utterances under noise at 10 and 5 dB SNR: white noise 0.2–0.7 dB, babble
/// 3.5 dB and more, clean speech 8 dB and more (10th to 90th percentile of the utterances).
struct NoiseSteadiness: Sendable {
    /// Frames kept: three seconds of 32 ms frames.
    static let windowFrames = 94
    /// Frames needed before the spread means anything: a second of 32 ms frames (with fewer,
    /// the 10th percentile is one of the few quietest frames, and any noise looks steady).
    static let minimumFrames = 31

    private var recentDB: [Double] = []
    private var oldest = 0

    /// Takes the power (mean square) of the next frame of sound.
    mutating func add(power: Double) {
        let decibels = 10 * log10(power)
        if recentDB.count < Self.windowFrames {
            recentDB.append(decibels)
        } else {
            recentDB[oldest] = decibels
            oldest = (oldest + 1) % Self.windowFrames
        }
    }

    /// The 10th percentile of the kept frames' powers minus their minimum, in dB; `nil` before
    /// `minimumFrames` frames.
    var spreadDB: Double? {
        guard recentDB.count >= Self.minimumFrames else { return nil }
        let sorted = recentDB.sorted()
        return sorted[sorted.count / 10] - sorted[0]
    }
}
