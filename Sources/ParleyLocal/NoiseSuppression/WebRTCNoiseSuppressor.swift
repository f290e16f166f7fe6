import CWebRTCAudioProcessing
import Foundation
import ParleyCore

/// Noise suppression on webrtc-audio-processing (Debian's 0.3): WebRTC's statistical
/// suppressor, which estimates the noise spectrum with a speech-probability model rather than
/// from the quietest stretches, so it also follows noise that never pauses.
///
/// The library takes exactly 10 ms at a time; frames of any other length pass through a
/// buffer, which delays the audio by 10 ms.
///
/// ```swift
/// let suppressor = try #require(WebRTCNoiseSuppressor(kind: .farField, frameLength: 512, sampleRate: 16_000))
/// suppressor.suppress(&frame)
/// ```
///
/// `@unchecked Sendable`: the library state and both buffers are only used while holding `lock`.
public final class WebRTCNoiseSuppressor: NoiseSuppressor, @unchecked Sendable {
    /// The library's suppression level, 0 (low) … 3 (very high), for each kind.
    public static func level(for kind: NoiseReduction) -> Int32 {
        switch kind {
        case .nearField: 1
        case .farField: 2
        }
    }

    /// The frame length the suppressor takes.
    public let frameLength: Int
    private let chunkLength: Int
    private let lock = NSLock()
    private let state: OpaquePointer
    /// Input not yet processed (less than a chunk).
    private var pendingInput: [Float] = []
    /// Processed audio not yet handed back; starts with a chunk of silence (the delay).
    private var pendingOutput: [Float]

    /// Creates a suppressor for frames of `frameLength` mono samples at `sampleRate` (8, 16,
    /// 32 or 48 kHz); `nil` when the library refuses the rate.
    public convenience init?(kind: NoiseReduction, frameLength: Int, sampleRate: Int) {
        self.init(level: Self.level(for: kind), frameLength: frameLength, sampleRate: sampleRate)
    }

    /// Creates a suppressor at the library's `level` (0…3); `nil` when the library refuses it.
    public init?(level: Int32, highPass: Bool = false, frameLength: Int, sampleRate: Int) {
        guard frameLength > 0, [8_000, 16_000, 32_000, 48_000].contains(sampleRate), let state = parley_webrtc_noise_suppressor_create(Int32(sampleRate), level, highPass ? 1 : 0) else {
            return nil
        }
        self.state = state
        self.frameLength = frameLength
        chunkLength = sampleRate / 100
        pendingOutput = frameLength % chunkLength == 0 ? [] : [Float](repeating: 0, count: chunkLength)
    }

    deinit { parley_webrtc_noise_suppressor_destroy(state) }

    /// Suppresses noise in `frame` (which must hold `frameLength` samples; others pass as they are).
    public func suppress(_ frame: inout [Float]) {
        guard frame.count == frameLength else { return }
        lock.withLock {
            pendingInput += frame
            var start = 0
            while pendingInput.count - start >= chunkLength {
                var chunk = Array(pendingInput[start..<start + chunkLength])
                _ = chunk.withUnsafeMutableBufferPointer { parley_webrtc_noise_suppressor_process(state, $0.baseAddress!) }
                pendingOutput += chunk
                start += chunkLength
            }
            pendingInput.removeFirst(start)
            frame = Array(pendingOutput.prefix(frameLength))
            pendingOutput.removeFirst(frameLength)
        }
    }
}
