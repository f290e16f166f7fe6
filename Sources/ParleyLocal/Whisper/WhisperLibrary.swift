import CWhisper

/// Process-wide setup of libwhisper.
enum WhisperLibrary {
    /// Routes whisper.cpp's and ggml's log output to a callback that drops it. The library
    /// logs several INFO lines per VAD frame and per decode; failures reach callers as errors.
    /// Evaluated once per process (a global `let` is initialised exactly once).
    static let quietLogging: Void = whisper_log_set(discardWhisperLogLine, nil)
}

/// The log callback installed by `WhisperLibrary.quietLogging`: drops every line.
private func discardWhisperLogLine(
    _ level: ggml_log_level, _ text: UnsafePointer<CChar>?, _ userData: UnsafeMutableRawPointer?
) {}
