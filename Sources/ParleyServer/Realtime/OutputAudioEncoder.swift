import Foundation
import ParleyCore

/// Turns the session's output audio (pcm16 at 24 kHz) into the client's output format: as is
/// for pcm16, band-limited down to 8 kHz and G.711-encoded for the telephone formats. Each
/// response gets a resampler of its own, flushed when its audio ends.
struct OutputAudioEncoder {
    /// The client's output format.
    private(set) var format: RealtimeAudioFormat = .pcm16
    private let makeResampler: @Sendable (Int, Int) -> any Resampler
    private var resamplers: [String: any Resampler] = [:]

    /// Creates an encoder for pcm16; `makeResampler` makes the resamplers G.711 needs.
    init(makeResampler: @escaping @Sendable (Int, Int) -> any Resampler) {
        self.makeResampler = makeResampler
    }

    /// Switches formats; audio of responses already under way follows the new one.
    mutating func use(_ newFormat: RealtimeAudioFormat) {
        format = newFormat
        resamplers.removeAll()
    }

    /// The base64 delta for a chunk of response `responseID`'s audio (empty while the
    /// resampler still holds everything back).
    mutating func delta(_ samples: [Int16], responseID: String) -> String {
        guard format != .pcm16 else { return format.base64(samples) }
        let converted = self.samples(samples, responseID: responseID)
        return converted.isEmpty ? "" : format.base64(converted)
    }

    /// A chunk of response `responseID`'s audio at the format's rate, before encoding (as is for pcm16).
    mutating func samples(_ samples: [Int16], responseID: String) -> [Int16] {
        guard format != .pcm16 else { return samples }
        var resampler = resamplers[responseID] ?? makeResampler(RealtimeSessionSettings.supportedAudioRate, format.sampleRate)
        let converted = resampler.process(SampleConversion.float(samples))
        resamplers[responseID] = resampler
        return SampleConversion.pcm16(converted)
    }

    /// The last delta of response `responseID`'s audio: what its resampler held back, if any.
    mutating func finish(responseID: String) -> String? {
        let rest = remainingSamples(responseID: responseID)
        return rest.isEmpty ? nil : format.base64(rest)
    }

    /// What response `responseID`'s resampler held back, before encoding.
    mutating func remainingSamples(responseID: String) -> [Int16] {
        guard var resampler = resamplers.removeValue(forKey: responseID) else { return [] }
        return SampleConversion.pcm16(resampler.flush())
    }
}
