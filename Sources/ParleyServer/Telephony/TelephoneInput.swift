import Foundation
import ParleyCore

/// A call's audio on its way into the session: the echo gate at 8 kHz, then up to 16 kHz
/// (band-limited) with the telephone bandwidth extension, which brings Whisper's word error
/// rate on phone audio back to its wideband figure (see `TelephoneBandwidthExtension`).
struct TelephoneInput {
    /// The rate `samples` returns.
    static let outputRate = TelephoneBandwidthExtension.sampleRate
    private let gate = TwilioEchoGate()
    private var upsampler = VoiceSessionProviders.sincResampler(from: G711.sampleRate, to: TelephoneInput.outputRate)
    private var widening = TelephoneBandwidthExtension()

    /// The session's audio for 8 kHz caller samples.
    mutating func samples(_ narrowband: [Int16], agentPlaying: Bool) -> [Int16] {
        let gated = gate.pass(narrowband, agentPlaying: agentPlaying)
        return SampleConversion.pcm16(widening.process(upsampler.process(SampleConversion.float(gated))))
    }
}
