import Foundation

/// Tells a person from an answering machine by how a placed call is answered, the way carriers'
/// detection does: a person says a short "Hello?" and waits; a machine plays a long greeting,
/// then often a beep. Fed the callee's audio 20 ms at a time; each frame returns the verdict so
/// far. After `machine`, `beepHeard` listens for the beep that starts the recording.
struct AnsweringMachineDetector {
    /// What the answer sounds like so far.
    enum Verdict: Equatable {
        /// Not decided yet.
        case listening
        /// A short greeting, then silence: a person waiting for an answer.
        case human
        /// A greeting longer than a person's.
        case machine
        /// Nothing to go by within the time allowed (silence, or a greeting that never ended).
        case unknown
    }

    /// A greeting longer than this is a machine's.
    var longestHumanGreeting: Duration = .milliseconds(2_000)
    /// Silence this long after a short greeting means a person is waiting.
    var silenceAfterGreeting: Duration = .milliseconds(800)
    /// How long to listen before giving up as `unknown`.
    var decisionLimit: Duration = .milliseconds(5_000)
    /// A frame louder than this (RMS, dBFS) is voiced.
    var voicedLevelDBFS: Float = -35
    /// Tonal frames in a row that make a beep (8: 160 ms).
    var beepFrames = 8

    private var heard: Duration = .zero
    /// When the greeting began (its first voiced frame's start) and was last voiced (a frame's end), in audio time.
    private var greetingStart: Duration?
    private var lastVoiced: Duration = .zero
    private var tonalRun = 0
    private var lastTone: Double?

    /// One frame (20 ms) of the callee's audio at `sampleRate`; the verdict so far.
    mutating func frame(_ samples: [Int16], sampleRate: Int) -> Verdict {
        let frame = Duration.microseconds(samples.count * 1_000_000 / max(sampleRate, 1))
        heard += frame
        if Self.levelDBFS(samples) > voicedLevelDBFS {
            if greetingStart == nil { greetingStart = heard - frame }
            lastVoiced = heard
        }
        if let start = greetingStart {
            if lastVoiced - start > longestHumanGreeting { return .machine }
            if heard - lastVoiced >= silenceAfterGreeting { return .human }
        }
        return heard >= decisionLimit ? .unknown : .listening
    }

    /// One frame (20 ms) after the greeting: whether it ends a beep (a steady tone of 500 to
    /// 2,500 Hz over `beepFrames` frames).
    mutating func beepHeard(_ samples: [Int16], sampleRate: Int) -> Bool {
        guard Self.levelDBFS(samples) > voicedLevelDBFS, let tone = Self.tone(of: samples, sampleRate: sampleRate),
              (500...2_500).contains(tone) else {
            tonalRun = 0
            lastTone = nil
            return false
        }
        tonalRun = lastTone.map { abs($0 - tone) <= $0 * 0.08 } == true ? tonalRun + 1 : 1
        lastTone = tone
        return tonalRun >= beepFrames
    }

    /// The frequency of `samples` when they are one tone (at least 70 % of their energy at the
    /// frequency their zero crossings give); `nil` for speech, noise and silence.
    static func tone(of samples: [Int16], sampleRate: Int) -> Double? {
        guard samples.count > 16 else { return nil }
        let values = samples.map { Double($0) }
        // Where the signal crosses zero, between samples by linear interpolation: half a period apart.
        var crossings: [Double] = []
        for index in 1..<values.count where (values[index - 1] < 0) != (values[index] < 0) {
            crossings.append(Double(index - 1) + values[index - 1] / (values[index - 1] - values[index]))
        }
        guard crossings.count >= 3, let first = crossings.first, let last = crossings.last, last > first else { return nil }
        let frequency = Double(crossings.count - 1) * Double(sampleRate) / (2 * (last - first))
        // Goertzel at that frequency, against the frame's energy: 1 for a pure tone.
        let coefficient = 2 * cos(2 * Double.pi * frequency / Double(sampleRate))
        var (previous, beforePrevious) = (0.0, 0.0)
        for value in values { (previous, beforePrevious) = (value + coefficient * previous - beforePrevious, previous) }
        let power = previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
        let energy = values.reduce(0) { $0 + $1 * $1 }
        guard energy > 0 else { return nil }
        return power * 2 / (Double(values.count) * energy) >= 0.7 ? frequency : nil
    }

    /// The RMS level of `samples` in dBFS (−∞ for digital silence).
    static func levelDBFS(_ samples: [Int16]) -> Float {
        guard !samples.isEmpty else { return -.infinity }
        let energy = samples.reduce(Float(0)) { sum, sample in
            let value = Float(sample) / 32_768
            return sum + value * value
        }
        return 10 * log10(energy / Float(samples.count))
    }
}
