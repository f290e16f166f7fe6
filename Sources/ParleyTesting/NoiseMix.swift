import Foundation

/// Speech under noise at a chosen signal-to-noise ratio, and the noises to put it under.
///
/// ```swift
/// let babble = try await NoiseMix.babble(milliseconds: 8_000)
/// let noisy = NoiseMix.mix(speech, under: babble, snrDB: 5, leadInMs: 1_000)
/// ```
public enum NoiseMix {
    /// Several people talking at once: `talkers` voices of `TestVoice.assorted`, each saying
    /// sentences of its own from a different start, summed and brought to an RMS of 0.1.
    public static func babble(milliseconds: Int, talkers: Int = 6) async throws -> [Float] {
        let count = milliseconds * TestVoice.sampleRate / 1000
        var sum = [Float](repeating: 0, count: count)
        let lines = EverydaySentences.all
        for talker in 0..<talkers {
            let voice = TestVoice.assorted[talker % TestVoice.assorted.count]
            var speech: [Float] = []
            var line = talker * 3
            while speech.count < count + talker * 2_000 {
                speech += try await voice.speak(lines[line % lines.count])
                line += 1
            }
            let level = Float(rms(speech))
            for index in 0..<count { sum[index] += speech[index + talker * 2_000] / max(level, 1e-6) }
        }
        let level = Float(rms(sum))
        return sum.map { 0.1 * $0 / max(level, 1e-6) }
    }

    /// `speech` with `leadInMs` of noise before it and 500 ms after, the noise scaled so the
    /// speech's power over its active part is `snrDB` above the noise's. `noise` is looped.
    public static func mix(_ speech: [Float], under noise: [Float], snrDB: Double, leadInMs: Int = 1_000) -> [Float] {
        let leadIn = leadInMs * TestVoice.sampleRate / 1000
        let total = leadIn + speech.count + TestVoice.sampleRate / 2
        let gain = (activePower(speech) / max(rms(noise) * rms(noise), 1e-12) / pow(10, snrDB / 10)).squareRoot()
        var mixed = (0..<total).map { Float(gain) * noise[$0 % noise.count] }
        for index in speech.indices { mixed[leadIn + index] += speech[index] }
        return mixed
    }

    /// The RMS of `samples`.
    public static func rms(_ samples: [Float]) -> Double {
        (samples.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(samples.count, 1))).squareRoot()
    }

    /// The mean power of the 20 ms pieces of `speech` within 30 dB of its loudest: speech's
    /// level without its pauses.
    public static func activePower(_ speech: [Float]) -> Double {
        let powers = stride(from: 0, to: speech.count, by: 320).map { start in
            let piece = speech[start..<min(start + 320, speech.count)]
            return piece.reduce(0) { $0 + Double($1) * Double($1) } / Double(piece.count)
        }
        let loudest = powers.max() ?? 0
        let active = powers.filter { $0 > loudest / 1_000 }
        return active.reduce(0, +) / Double(max(active.count, 1))
    }
}
