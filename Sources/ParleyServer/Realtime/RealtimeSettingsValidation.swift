import Foundation
import ParleyCore

/// Checks the settings a client asks for against what Parley supports.
enum RealtimeSettingsValidation {
    /// Checks an update a client sent; returns the problem to report, if any.
    static func problem(in update: RealtimeSessionSettings) -> (message: String, param: String)? {
        if let rate = update.inputAudioRate, rate != RealtimeSessionSettings.supportedAudioRate {
            return ("Only pcm16 audio at 24000 Hz is supported for input (got \(rate) Hz).", "session.audio.input.format")
        }
        if let rate = update.outputAudioRate, rate != RealtimeSessionSettings.supportedAudioRate {
            return ("Only pcm16 audio at 24000 Hz is supported for output (got \(rate) Hz).", "session.audio.output.format")
        }
        if let speed = update.speed, !(0.25...4).contains(speed) {
            return ("speed must be between 0.25 and 4.", "session.audio.output.speed")
        }
        if let temperature = update.temperature, !(0...2).contains(temperature) {
            return ("temperature must be between 0 and 2.", "session.temperature")
        }
        if case .serverVAD(let vad)? = update.turnDetection, !(0...1).contains(vad.threshold) {
            return ("turn_detection.threshold must be between 0 and 1.", "session.turn_detection.threshold")
        }
        return nil
    }
}
