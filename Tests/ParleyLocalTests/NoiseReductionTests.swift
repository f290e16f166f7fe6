import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyLocal

/// `noise_reduction` with the real ears: flite's speech cleaned by speexdsp and transcribed by
/// Whisper, and a session's recognizer handed the cleaned audio.
@Suite(.serialized) struct NoiseReductionTests {
    static let sentences = Array(TestModels.sentences.prefix(6))
    static func power(_ samples: [Float]) -> Double {
        samples.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(samples.count, 1))
    }

    /// `audio` through speexdsp in the session's VAD frames (512 samples).
    static func suppressed(_ audio: [Float], kind: NoiseReduction?) -> [Float] {
        guard let kind else { return audio }
        let suppressor = SpeexNoiseSuppressor(kind: kind, frameLength: 512, sampleRate: 16_000)
        var cleaned: [Float] = []
        for start in stride(from: 0, to: audio.count - 511, by: 512) {
            var frame = Array(audio[start..<start + 512])
            suppressor.suppress(&frame)
            cleaned += frame
        }
        return cleaned
    }

    /// Word errors over the sentences, each with half a second of silence around it.
    static func wordErrors(reduction: NoiseReduction?) async throws -> (errors: Int, words: Int) {
        var pairs: [(reference: String, hypothesis: String)] = []
        let pad = [Float](repeating: 0, count: 8_000)
        for sentence in sentences {
            let audio = suppressed(pad + (try await TestModels.speech(sentence)) + pad, kind: reduction)
            pairs.append((sentence, try await TestModels.recognizer().transcribe(audio, isFinal: true).text))
        }
        return totalWordErrors(pairs)
    }

    /// Noise reduction must not cost recognition on clean speech (at most one word of 45: a
    /// recognizer shared by tests running side by side decodes a little differently). What it
    /// does in noise, where Whisper's errors move by several words from run to run, is measured
    /// by the `turns` bench area, not judged here.
    @Test func noiseReductionDoesNotHurtCleanSpeech() async throws {
        let none = try await Self.wordErrors(reduction: nil)
        let reduced = try await Self.wordErrors(reduction: .nearField)
        #expect(reduced.errors <= none.errors + 1, "clean speech: \(none.errors) word errors without noise reduction, \(reduced.errors) with it")
    }

    /// Word errors and transcripts over `sentences` as a session with `noise_reduction` would
    /// hand them to Whisper: each with a second of `noise` before it at `snrDB`, or clean.
    static func transcripts(
        _ sentences: [String], noise: [Float]?, snrDB: Double, reduction: NoiseReduction?
    ) async throws -> (errors: Int, texts: [String]) {
        var pairs: [(reference: String, hypothesis: String)] = []
        for sentence in sentences {
            let speech = try await TestModels.speech(sentence)
            var audio = NoiseMix.mix(speech, under: noise ?? [0], snrDB: snrDB)
            if let reduction {
                var suppressor = InputNoiseSuppression.make(kind: reduction, frameLength: 512, sampleRate: 16_000)
                audio = stride(from: 0, to: audio.count - 511, by: 512).flatMap { start in
                    var frame = Array(audio[start..<start + 512])
                    suppressor.suppress(&frame)
                    return frame
                }
            }
            pairs.append((sentence, try await TestModels.recognizer().transcribe(audio, isFinal: true).text))
        }
        return (totalWordErrors(pairs).errors, pairs.map(\.hypothesis))
    }

    /// What a session ships as `noise_reduction`: it leaves clean speech's transcripts as they
    /// were, and does not make those of speech under white noise at 5 dB SNR worse (the
    /// `turns` bench area measures how much better, over more sentences and noises).
    @Test func theShippedNoiseReductionKeepsCleanTranscriptsAndHelpsInNoise() async throws {
        let sentences = Array(Self.sentences.prefix(4))
        let clean = try await Self.transcripts(sentences, noise: nil, snrDB: 0, reduction: nil)
        let cleanReduced = try await Self.transcripts(sentences, noise: nil, snrDB: 0, reduction: .nearField)
        #expect(cleanReduced.texts == clean.texts)
        let white = SyntheticSounds.whiteNoise(milliseconds: 10_000)
        let noisy = try await Self.transcripts(sentences, noise: white, snrDB: 5, reduction: nil)
        let noisyReduced = try await Self.transcripts(sentences, noise: white, snrDB: 5, reduction: .nearField)
        print("White noise at 5 dB SNR: \(noisy.errors) word errors without noise reduction, \(noisyReduced.errors) with it")
        #expect(noisyReduced.errors <= noisy.errors, "\(noisy.texts) became \(noisyReduced.texts)")
    }

    /// `audio` through the shipped SNR gate in the session's VAD frames: whether it ends up
    /// suppressing, its estimate, and how many frames it changed.
    static func gated(_ audio: [Float]) -> (isSuppressing: Bool, estimatedSNR: Double, changedFrames: Int) {
        var gate = LowSNRNoiseSuppressor(SpeexNoiseSuppressor(kind: .nearField, frameLength: 512, sampleRate: 16_000))
        var changed = 0
        for start in stride(from: 0, to: audio.count - 511, by: 512) {
            var frame = Array(audio[start..<start + 512])
            let before = frame
            gate.suppress(&frame)
            if frame != before { changed += 1 }
        }
        return (gate.isSuppressing, gate.estimatedSNR, changed)
    }

    @Test func theSNRGateSuppressesOnlyNoisyInput() async throws {
        let speech = try await TestModels.speech(Self.sentences[1])
        // Clean, with a quiet hiss 50 dB down, and with white noise at 5 dB SNR.
        let white = SyntheticSounds.whiteNoise(milliseconds: 5_000)
        for (noise, snrDB, noisy) in [(nil, 0.0, false), (white, 50, false), (white, 5, true)] {
            let verdict = Self.gated(NoiseMix.mix(speech, under: noise ?? [0], snrDB: snrDB))
            #expect(verdict.isSuppressing == noisy, "estimated SNR \(verdict.estimatedSNR) dB")
            #expect(noisy ? verdict.changedFrames > 0 : verdict.changedFrames == 0, "\(verdict.changedFrames) frames changed")
        }
    }

    /// Babble is not the steady noise speexdsp learns: speech under it passes as it came.
    @Test func babbleIsLeftAsItCame() async throws {
        let speech = try await TestModels.speech(Self.sentences[1])
        let babble = try await NoiseMix.babble(milliseconds: 6_000)
        let verdict = Self.gated(NoiseMix.mix(speech, under: babble, snrDB: 5))
        #expect(!verdict.isSuppressing && verdict.changedFrames == 0, "\(verdict.changedFrames) frames changed, estimated SNR \(verdict.estimatedSNR) dB")
    }

    /// A client that sends zeros before its microphone opens (the turn harness pads each clip
    /// with them): the noise after them is still noise, and the gate still waits to have heard
    /// enough before it changes anything.
    @Test func digitalSilenceTeachesTheGateNothing() async throws {
        let speech = try await TestModels.speech(Self.sentences[1])
        let zeros = [Float](repeating: 0, count: 16_000)
        let noisy = Self.gated(zeros + NoiseMix.mix(speech, under: SyntheticSounds.whiteNoise(milliseconds: 5_000), snrDB: 5, leadInMs: 300))
        #expect(noisy.isSuppressing, "estimated SNR \(noisy.estimatedSNR) dB")
        // 400 ms of noise after the zeros is less than the half second the gate waits to hear.
        #expect(Self.gated(zeros + SyntheticSounds.whiteNoise(milliseconds: 400, level: 0.05)).changedFrames == 0)
    }

    @Test func webRTCSuppressionTakesSteadyNoiseDown() throws {
        let noise = SyntheticSounds.whiteNoise(milliseconds: 3_000, level: 0.05)
        let suppressor = try #require(WebRTCNoiseSuppressor(kind: .farField, frameLength: 512, sampleRate: 16_000))
        var cleaned: [Float] = []
        for start in stride(from: 0, to: noise.count - 511, by: 512) {
            var frame = Array(noise[start..<start + 512])
            suppressor.suppress(&frame)
            #expect(frame.count == 512)
            cleaned += frame
        }
        let reductionDB = 10 * log10(Self.power(Array(noise.suffix(16_000))) / max(Self.power(Array(cleaned.suffix(16_000))), 1e-12))
        #expect(reductionDB >= 10, "white noise only \(reductionDB) dB lower after two seconds")
        #expect(WebRTCNoiseSuppressor(level: 7, frameLength: 512, sampleRate: 16_000) == nil)
        #expect(WebRTCNoiseSuppressor(kind: .nearField, frameLength: 512, sampleRate: 11_025) == nil)
    }

    @Test func aSessionWithNoiseReductionHandsTheRecognizerCleanedAudio() async throws {
        let recognizer = CapturingRecognizer()
        let vad = try SileroVAD(modelPath: TestModels.locator.path(of: .sileroVAD))
        let providers = VoiceSessionProviders(
            recognizer: recognizer, model: ScriptedLanguageModel(replies: [.text("Fine.")]), synthesizer: ScriptedSpeechSynthesizer(),
            makeVoiceActivityDetector: { vad }, makeResampler: VoiceSessionProviders.sincResampler,
            makeNoiseSuppressor: { InputNoiseSuppression.make(kind: $0, frameLength: $1, sampleRate: $2) }
        )
        var configuration = VoiceSessionConfiguration()
        configuration.noiseReduction = .farField
        let session = VoiceSession(providers: providers, configuration: configuration)
        let recorder = SessionRecorder()
        recorder.record(session)
        // A second and a half of white noise before the question lets the gate and the
        // suppressor learn it.
        let speech = try await TestModels.speech(Self.sentences[0])
        let noise = SyntheticSounds.whiteNoise(milliseconds: 1_500 + speech.count / 16 + 1_500, level: 1)
        let gain = Float((Self.power(speech) / Self.power(noise) / pow(10, 0.5)).squareRoot())
        var input = noise.map { gain * $0 }
        for index in speech.indices { input[24_000 + index] += speech[index] }
        try await session.appendAudio(SampleConversion.pcm16(input), sampleRate: 16_000)
        #expect(await recorder.waitFor(Match.finalTranscript))
        let heard = try #require(recognizer.utterances.first)
        // The turn begins with its prefix padding, noise only: compared with the same stretch of
        // the input.
        let startMs = try #require(await recorder.events.compactMap { event in
            if case .speechStarted(_, let audioStartMs) = event { audioStartMs } else { nil }
        }.first)
        let offset = startMs * 16
        let noiseBefore = Self.power(Array(input[offset..<(offset + 3_200)]))
        let noiseAfter = Self.power(Array(heard.prefix(3_200)))
        let reductionDB = 10 * log10(noiseBefore / max(noiseAfter, 1e-12))
        print("Noise reduction in a session: the noise before the question (from \(startMs) ms) is \(Int(reductionDB)) dB lower")
        #expect(reductionDB >= 10)
    }
}

/// A recognizer that keeps every final utterance it is given and hears a fixed sentence.
final class CapturingRecognizer: SpeechRecognizer, @unchecked Sendable {
    // @unchecked Sendable: `captured` is guarded by `lock`.
    private let lock = NSLock()
    private var captured: [[Float]] = []
    let sampleRate = 16_000
    let supportsPartials = false

    var utterances: [[Float]] { lock.withLock { captured } }

    func transcribe(_ samples: [Float], isFinal: Bool) async throws -> Transcription {
        if isFinal { lock.withLock { captured.append(samples) } }
        return Transcription(text: "The weather is lovely today.", audioDuration: Double(samples.count) / 16_000, processingDuration: 0)
    }
}
