import Foundation

/// A voice activity detector that compares each frame's energy with an adaptive noise floor.
///
/// The floor is the lowest frame energy seen over a sliding window (minimum statistics), so
/// it follows the room's noise up and down while speech, which always pauses, cannot hold
/// it up. A frame is speech when it is `thresholdOverFloorDB` above the floor (measured here:
/// a fixed −35 dBFS threshold marks everything as speech at 10 dB SNR; floor + 9 dB holds)
/// and louder than `minimumSpeechDBFS`. A first-order high-pass removes DC and rumble first.
///
/// Energy cannot tell speech from other sounds as loud; at 0 dB SNR use the Silero VAD.
public struct EnergyVAD: VoiceActivityDetector {
    /// Tuning of the detector.
    public struct Configuration: Sendable, Hashable, Codable {
        /// How far above the noise floor a frame must be to count as speech (probability 0.5).
        public var thresholdOverFloorDB: Float
        /// Width in dB of the soft step from probability ~0.2 to ~0.8 around the threshold.
        public var transitionDB: Float
        /// Frames quieter than this are never speech, whatever the floor.
        public var minimumSpeechDBFS: Float
        /// How long the noise floor remembers a quiet frame, in milliseconds.
        public var floorWindowMilliseconds: Int
        /// Cut-off of the high-pass filter applied before measuring, in hertz.
        public var highPassHertz: Float

        /// Creates a configuration; the defaults suit speech at 16 kHz in 20 ms frames.
        public init(
            thresholdOverFloorDB: Float = 9,
            transitionDB: Float = 2,
            minimumSpeechDBFS: Float = -55,
            floorWindowMilliseconds: Int = 2_000,
            highPassHertz: Float = 80
        ) {
            self.thresholdOverFloorDB = thresholdOverFloorDB
            self.transitionDB = transitionDB
            self.minimumSpeechDBFS = minimumSpeechDBFS
            self.floorWindowMilliseconds = floorWindowMilliseconds
            self.highPassHertz = highPassHertz
        }
    }

    /// The floor window is tracked as this many sub-windows, each remembering its minimum.
    private static let subwindowCount = 4

    public let sampleRate: Int
    public let frameLength: Int
    /// The tuning in use.
    public let configuration: Configuration
    /// The current noise floor in dBFS, `nil` before the first frame.
    public private(set) var noiseFloorDBFS: Float?

    /// Frames per floor sub-window.
    private let framesPerSubwindow: Int
    /// Minima of the completed sub-windows, newest last.
    private var subwindowMinima: [Float] = []
    /// Minimum of the sub-window being filled.
    private var currentMinimum = Float.infinity
    /// Frames so far in the sub-window being filled.
    private var framesInSubwindow = 0
    /// High-pass pole.
    private let highPassPole: Float
    /// High-pass state: the previous input and output sample.
    private var previousInput: Float = 0
    private var previousOutput: Float = 0

    /// Creates a detector for mono frames of `frameLength` samples (default 20 ms) at `sampleRate`.
    public init(sampleRate: Int = 16_000, frameLength: Int? = nil, configuration: Configuration = Configuration()) {
        self.sampleRate = max(sampleRate, 1)
        self.frameLength = max(frameLength ?? sampleRate / 50, 1)
        self.configuration = configuration
        let frameMilliseconds = max(Double(self.frameLength) * 1000 / Double(self.sampleRate), 1)
        let windowFrames = Double(configuration.floorWindowMilliseconds) / frameMilliseconds
        framesPerSubwindow = max(Int((windowFrames / Double(Self.subwindowCount)).rounded()), 1)
        highPassPole = Float(exp(-2 * Double.pi * Double(configuration.highPassHertz) / Double(self.sampleRate)))
    }

    public mutating func speechProbability(of frame: [Float]) -> Float {
        let energy = LevelMeter.dBFS(amplitude: highPassedRMS(frame))
        let floor = updateFloor(with: energy)
        guard energy >= configuration.minimumSpeechDBFS else { return 0 }
        let excess = energy - floor - configuration.thresholdOverFloorDB
        // A logistic step: 0.5 at the threshold, ~0.2 / ~0.8 at ∓ transitionDB / 2.
        return 1 / (1 + exp(-excess * 2.77 / max(configuration.transitionDB, 0.01)))
    }

    public mutating func reset() {
        noiseFloorDBFS = nil
        subwindowMinima.removeAll()
        currentMinimum = .infinity
        framesInSubwindow = 0
        previousInput = 0
        previousOutput = 0
    }

    /// RMS of the frame after the high-pass filter, carrying filter state across frames.
    private mutating func highPassedRMS(_ frame: [Float]) -> Float {
        guard !frame.isEmpty else { return 0 }
        var input = previousInput
        var output = previousOutput
        let pole = highPassPole
        var sum: Float = 0
        frame.withUnsafeBufferPointer { samples in
            for sample in samples {
                output = sample - input + pole * output
                input = sample
                sum += output * output
            }
        }
        previousInput = input
        previousOutput = output
        return (sum / Float(frame.count)).squareRoot()
    }

    /// Feeds one frame energy to the minimum tracker and returns the floor.
    private mutating func updateFloor(with energy: Float) -> Float {
        currentMinimum = min(currentMinimum, energy)
        framesInSubwindow += 1
        if framesInSubwindow == framesPerSubwindow {
            subwindowMinima.append(currentMinimum)
            if subwindowMinima.count > Self.subwindowCount { subwindowMinima.removeFirst() }
            currentMinimum = .infinity
            framesInSubwindow = 0
        }
        let floor = subwindowMinima.reduce(currentMinimum, min)
        noiseFloorDBFS = floor
        return floor
    }
}
