import CWhisper
import Foundation
import ParleyCore

/// Voice activity detection with the Silero VAD network through whisper.cpp's `whisper_vad_*`
/// API: accurate in noise where an energy detector fails, about 300× faster than real time.
///
/// Frames are 512 samples (32 ms) at 16 kHz. The network's recurrent state carries over from
/// frame to frame (`whisper_vad_detect_speech_no_reset`), so each frame's probability uses
/// everything heard since the last `reset()`. Each session owns its own detector; the model
/// file is under 1 MB and loads in milliseconds.
///
/// ```swift
/// var vad = try SileroVAD(modelPath: ModelLocator().path(of: .sileroVAD))
/// let isSpeech = vad.speechProbability(of: frame512) > 0.5
/// ```
public final class SileroVAD: VoiceActivityDetector, @unchecked Sendable {  // `lock` guards `context`.
    /// Silero runs at 16 kHz.
    public let sampleRate = 16_000
    /// Silero's window at 16 kHz.
    public let frameLength = 512

    private let lock = NSLock()
    private let context: OpaquePointer

    /// Loads the Silero ggml model at `modelPath`.
    /// - Parameter threadCount: CPU threads per frame; one is plenty for a 32 ms frame.
    /// - Throws: `LocalModelError` when the file is missing or whisper.cpp cannot load it.
    public init(modelPath: String, threadCount: Int = 1) throws {
        guard FileManager.default.isReadableFile(atPath: modelPath) else {
            throw LocalModelError.missingFile(kind: "Silero VAD model", path: modelPath)
        }
        _ = WhisperLibrary.quietLogging
        var parameters = whisper_vad_default_context_params()
        parameters.n_threads = Int32(max(1, threadCount))
        parameters.use_gpu = false
        guard let context = whisper_vad_init_from_file_with_params(modelPath, parameters) else {
            throw LocalModelError.unloadable(kind: "Silero VAD model", path: modelPath)
        }
        // whisper.cpp allocates the recurrent state without clearing it.
        whisper_vad_reset_state(context)
        self.context = context
    }

    deinit {
        whisper_vad_free(context)
    }

    /// The probability (0…1) that `frame` holds speech, given the frames before it.
    ///
    /// A frame of the wrong length is zero-padded or cut to `frameLength`; non-finite samples
    /// count as silence. Returns 0 if the network cannot run (out of memory).
    public func speechProbability(of frame: [Float]) -> Float {
        var window = frame.prefix(frameLength).map { $0.isFinite ? $0 : 0 }
        if window.count < frameLength {
            window.append(contentsOf: repeatElement(0, count: frameLength - window.count))
        }
        return lock.withLock {
            let ran = window.withUnsafeBufferPointer { buffer in
                whisper_vad_detect_speech_no_reset(context, buffer.baseAddress, Int32(buffer.count))
            }
            guard ran, whisper_vad_n_probs(context) >= 1, let probabilities = whisper_vad_probs(context) else { return 0 }
            let probability = probabilities[0]
            return probability.isFinite ? min(1, max(0, probability)) : 0
        }
    }

    /// Clears the network's recurrent state, as before the first frame.
    public func reset() {
        lock.withLock { whisper_vad_reset_state(context) }
    }
}
