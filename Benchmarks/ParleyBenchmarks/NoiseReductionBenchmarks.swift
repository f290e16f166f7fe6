import Foundation
import ParleyCore
import ParleyLocal
import ParleyTesting

/// `noise_reduction` measured where it matters: Whisper tiny.en's word errors on flite's
/// everyday sentences, clean and under babble (six voices) and white noise at 10 and 5 dB SNR
/// (a second of noise before each sentence to learn it from), with no suppression, speexdsp's
/// preprocessor (always, and as shipped: only on steady noise below 20 dB estimated SNR) and
/// webrtc-audio-processing's suppressor; and each suppressor's CPU time per second of session
/// audio. Audio goes through the suppressor in the session's 512-sample frames, as in a session.
func noiseReductionBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    let recognizer = try WhisperSpeechRecognizer(modelPath: ModelLocator().path(of: .whisperTinyEnglish))
    let sentences = Array(EverydaySentences.all.prefix(quick ? 4 : 10))
    var speech: [[Float]] = []
    for sentence in sentences { speech.append(try await TestVoice.flite("slt").speak(sentence)) }
    let babble = try await NoiseMix.babble(milliseconds: 10_000)
    let white = SyntheticSounds.whiteNoise(milliseconds: 10_000)
    let conditions: [(name: String, noise: [Float]?, snrDB: Double)] = [
        ("clean", nil, 0), ("babble 10 dB SNR", babble, 10), ("babble 5 dB SNR", babble, 5),
        ("white noise 10 dB SNR", white, 10), ("white noise 5 dB SNR", white, 5),
    ]
    var results: [BenchmarkResult] = []
    for condition in conditions {
        let clips = speech.map { clip in
            condition.noise.map { NoiseMix.mix(clip, under: $0, snrDB: condition.snrDB) } ?? NoiseMix.mix(clip, under: [0], snrDB: 0)
        }
        for suppressor in NoiseSuppressorUnderTest.all {
            var pairs: [(reference: String, hypothesis: String)] = []
            for (sentence, clip) in zip(sentences, clips) {
                let heard = try await recognizer.transcribe(suppressor.run(clip), isFinal: true).text
                pairs.append((sentence, heard))
            }
            let total = totalWordErrors(pairs)
            results.append(BenchmarkResult(
                area: "turns", name: "Whisper tiny.en WER, flite speech, \(condition.name), noise reduction: \(suppressor.name) (\(total.words) words)",
                value: Double(total.errors) / Double(total.words) * 100, unit: "%", target: "", meetsTarget: nil
            ))
        }
    }
    let minute = NoiseMix.mix(Array(speech.joined()), under: babble, snrDB: 10, leadInMs: 0)
    for suppressor in NoiseSuppressorUnderTest.all where suppressor.make != nil {
        let seconds = medianSecondsPerCall(repetitions: quick ? 3 : 5) { _ = suppressor.run(minute) }
        results.append(BenchmarkResult(
            area: "turns", name: "noise reduction CPU per session-second: \(suppressor.name), 16 kHz, 512-sample frames",
            value: seconds / (Double(minute.count) / 16_000) * 1000, unit: "ms", target: "", meetsTarget: nil
        ))
    }
    return results
}

/// A suppressor as a session would run it, by name.
private struct NoiseSuppressorUnderTest: Sendable {
    var name: String
    var make: (@Sendable () -> any NoiseSuppressor)?

    static let all: [NoiseSuppressorUnderTest] = [
        NoiseSuppressorUnderTest(name: "none", make: nil),
        NoiseSuppressorUnderTest(name: "speexdsp −15 dB, always") { SpeexNoiseSuppressor(kind: .nearField, frameLength: 512, sampleRate: 16_000) },
        NoiseSuppressorUnderTest(name: "speexdsp −15 dB on steady noise below 20 dB estimated SNR (shipped)") {
            InputNoiseSuppression.make(kind: .nearField, frameLength: 512, sampleRate: 16_000)
        },
        NoiseSuppressorUnderTest(name: "webrtc moderate") { WebRTCNoiseSuppressor(kind: .nearField, frameLength: 512, sampleRate: 16_000)! },
        NoiseSuppressorUnderTest(name: "webrtc high") { WebRTCNoiseSuppressor(kind: .farField, frameLength: 512, sampleRate: 16_000)! },
    ]

    /// `audio` through a new suppressor in 512-sample frames (the last partial frame dropped).
    func run(_ audio: [Float]) -> [Float] {
        guard let make else { return audio }
        var suppressor = make()
        var cleaned: [Float] = []
        cleaned.reserveCapacity(audio.count)
        for start in stride(from: 0, to: audio.count - 511, by: 512) {
            var frame = Array(audio[start..<start + 512])
            suppressor.suppress(&frame)
            cleaned += frame
        }
        return cleaned
    }
}

