import Foundation
import ParleyCore

/// Voice activity detection with the Silero VAD network: accurate in noise where an energy
/// detector fails, hundreds of times faster than real time.
///
/// Frames are 512 samples (32 ms) at 16 kHz. The network's recurrent state carries over from
/// frame to frame, so each frame's probability uses everything heard since the last `reset()`.
/// Each session owns a detector — a few hundred bytes of state — and every detector shares
/// one `SileroNetwork` with the weights, loaded once per process.
///
/// ```swift
/// var vad = try SileroVAD(modelPath: ModelLocator().path(of: .sileroVAD))
/// let isSpeech = vad.speechProbability(of: frame512) > 0.5
/// ```
public struct SileroVAD: VoiceActivityDetector {
    /// Silero runs at 16 kHz.
    public let sampleRate = 16_000
    /// Silero's window at 16 kHz.
    public let frameLength = SileroNetwork.windowLength

    private let network: SileroNetwork
    private var state = SileroNetwork.State()

    /// A detector on the Silero model at `modelPath` (whisper.cpp's ggml format), sharing the
    /// weights with every other detector on the same file.
    /// - Throws: `LocalModelError` when the file is missing or is not a Silero model.
    public init(modelPath: String) throws {
        network = try SileroNetwork.shared(modelPath: modelPath)
    }

    /// A detector on an already loaded network.
    public init(network: SileroNetwork) {
        self.network = network
    }

    /// The probability (0…1) that `frame` holds speech, given the frames before it.
    ///
    /// A frame of the wrong length is zero-padded or cut to `frameLength`; non-finite samples
    /// count as silence.
    public mutating func speechProbability(of frame: [Float]) -> Float {
        var window = frame.prefix(frameLength).map { $0.isFinite ? $0 : 0 }
        if window.count < frameLength {
            window.append(contentsOf: repeatElement(0, count: frameLength - window.count))
        }
        let probability = network.speechProbability(of: window, state: &state)
        return probability.isFinite ? min(1, max(0, probability)) : 0
    }

    /// Clears the network's recurrent state, as before the first frame.
    public mutating func reset() {
        state = SileroNetwork.State()
    }
}
