#if canImport(SwiftUI) && os(iOS)
import CoreHaptics
import Foundation

/// The feel of a hold: one haptic pattern, a tap decaying into a low hum for as long as the
/// finger stays down. The engine is started ahead of time so the first press is not late.
@MainActor
final class HoldHaptics {
    private var engine: CHHapticEngine?
    private var player: (any CHHapticPatternPlayer)?

    init() {
        guard CHHapticEngine.capabilitiesForHardware().supportsHaptics else { return }
        do {
            let engine = try CHHapticEngine()
            engine.playsHapticsOnly = true
            try engine.start()
            let tap = CHHapticEvent(eventType: .hapticTransient, parameters: [
                CHHapticEventParameter(parameterID: .hapticIntensity, value: 0.8),
                CHHapticEventParameter(parameterID: .hapticSharpness, value: 0.6),
            ], relativeTime: 0)
            let hum = CHHapticEvent(eventType: .hapticContinuous, parameters: [
                CHHapticEventParameter(parameterID: .hapticIntensity, value: 0.22),
                CHHapticEventParameter(parameterID: .hapticSharpness, value: 0.1),
            ], relativeTime: 0.03, duration: 60)
            player = try engine.makePlayer(with: CHHapticPattern(events: [tap, hum], parameters: []))
            self.engine = engine
        } catch {
            // No haptics on this device or right now: the hold works without them.
            engine = nil
            player = nil
        }
    }

    /// Touch-down: the tap, then the hum.
    func begin() {
        try? engine?.start()
        try? player?.start(atTime: CHHapticTimeImmediate)
    }

    /// Release: the hum stops.
    func end() {
        try? player?.stop(atTime: CHHapticTimeImmediate)
    }
}
#endif
