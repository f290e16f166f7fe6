import CFlite
import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyLocal

/// Speech synthesised at test time with flite (cmu_us_slt, 16 kHz), straight through its C API.
///
/// `@unchecked Sendable`: flite keeps global state, so every call holds `lock`.
private final class TestVoice: @unchecked Sendable {
    static let shared = TestVoice()

    private let lock = NSLock()
    private let voice: UnsafeMutablePointer<cst_voice>

    private init() {
        flite_init()
        voice = register_cmu_us_slt(nil)
    }

    /// Mono samples in `[-1, 1)` at `sampleRate` speaking `text`.
    func speak(_ text: String) -> [Float] {
        lock.withLock {
            guard let wave = flite_text_to_wave(text, voice) else { return [] }
            defer { delete_wave(wave) }
            let samples = Array(UnsafeBufferPointer(start: wave.pointee.samples, count: Int(wave.pointee.num_samples)))
            #expect(Int(wave.pointee.sample_rate) == Self.sampleRate)
            return SampleConversion.float(samples)
        }
    }

    static let sampleRate = 16_000
}

/// Two spoken sentences with pauses around them, in white noise at a chosen SNR.
private struct SpeechScene {
    static let sampleRate = TestVoice.sampleRate
    /// The mixed audio.
    var samples: [Float]
    /// The speech alone.
    var clean: [Float]
    /// Where each sentence's speech begins and ends, in ms.
    var utterances: [(startMs: Int, endMs: Int)]
    /// RMS of the added noise.
    var noiseRMS: Float

    /// Builds the scene. SNR compares the speech's RMS while it is audible with the noise RMS.
    init(snrDB: Float, seed: UInt64) {
        let sentences = [
            "The quick brown fox jumps over the lazy dog.",
            "Please book a table for two at seven tonight.",
        ]
        let perMs = Self.sampleRate / 1000
        var clean = [Float](repeating: 0, count: 1_000 * perMs)
        var utterances: [(Int, Int)] = []
        for sentence in sentences {
            let speech = TestVoice.shared.speak(sentence)
            let audible = speech.indices.filter { abs(speech[$0]) > 0.01 }
            let offset = clean.count
            utterances.append(((offset + audible.first!) / perMs, (offset + audible.last! + 1) / perMs))
            clean += speech + [Float](repeating: 0, count: 1_500 * perMs)
        }
        let active = utterances.flatMap { clean[($0.0 * perMs)..<($0.1 * perMs)] }
        let speechRMS = (active.reduce(0) { $0 + $1 * $1 } / Float(active.count)).squareRoot()
        let noiseRMS = speechRMS / Float(pow(10, Double(snrDB) / 20))
        var generator = SeededNoise(seed: seed)
        samples = clean.map { $0 + noiseRMS * generator.gaussian() }
        self.noiseRMS = noiseRMS
        self.clean = clean
        self.utterances = utterances
    }

    /// Runs the energy VAD and a turn detector over `audio` (at 16 kHz) and returns the
    /// committed utterances as (start, end) in ms.
    static func turns(in audio: [Float], configuration: TurnDetector.Configuration = .init()) -> [(start: Int, end: Int)] {
        var vad = EnergyVAD(sampleRate: sampleRate)
        var detector = TurnDetector(sampleRate: sampleRate, configuration: configuration)
        var result: [(start: Int, end: Int)] = []
        for start in stride(from: 0, through: audio.count - vad.frameLength, by: vad.frameLength) {
            let frame = Array(audio[start..<(start + vad.frameLength)])
            let probability = vad.speechProbability(of: frame)
            for case .commit(let utterance) in detector.process(probability: probability, frame: frame, at: start / 16) {
                result.append((utterance.audioStartMs, utterance.audioEndMs))
            }
        }
        return result
    }
}

@Suite struct VADSpeechTests {
    @Test(arguments: [20, 10] as [Float])
    func oneTurnPerSpokenSentence(snrDB: Float) {
        let scene = SpeechScene(snrDB: snrDB, seed: 31)
        let turns = SpeechScene.turns(in: scene.samples)
        #expect(turns.count == scene.utterances.count, "\(turns) for speech at \(scene.utterances)")
        for (turn, spoken) in zip(turns, scene.utterances) {
            #expect(abs(turn.start - (spoken.startMs - 300)) <= 120, "turn \(turn) for speech \(spoken)")
            #expect(abs(turn.end - (spoken.endMs + 500)) <= 200, "turn \(turn) for speech \(spoken)")
        }
    }

    @Test(arguments: [20, 10] as [Float])
    func loudSpeechFramesAreDetectedAndPausesAreNot(snrDB: Float) {
        let scene = SpeechScene(snrDB: snrDB, seed: 32)
        var vad = EnergyVAD()
        var loudFrames = 0, loudDetected = 0, pauseFrames = 0, pauseDetected = 0
        for start in stride(from: 0, through: scene.samples.count - 320, by: 320) {
            let isSpeech = vad.speechProbability(of: Array(scene.samples[start..<(start + 320)])) >= 0.5
            let ms = start / 16
            let cleanRMS = LevelMeter.rms(Array(scene.clean[start..<(start + 320)]))
            if 20 * log10(max(cleanRMS, 1e-9) / scene.noiseRMS) >= 10 {
                loudFrames += 1
                if isSpeech { loudDetected += 1 }
            } else if ms > 300, !scene.utterances.contains(where: { (($0.startMs - 100)...($0.endMs + 100)).contains(ms) }) {
                pauseFrames += 1
                if isSpeech { pauseDetected += 1 }
            }
        }
        #expect(Double(loudDetected) / Double(loudFrames) >= 0.95)
        #expect(Double(pauseDetected) / Double(pauseFrames) <= 0.02)
    }

    @Test func speechAt0dBSNRNeverStartsATurnInThePauses() {
        let scene = SpeechScene(snrDB: 0, seed: 33)
        for turn in SpeechScene.turns(in: scene.samples) {
            #expect(scene.utterances.contains { ($0.startMs - 400...$0.endMs).contains(turn.start) }, "\(turn)")
        }
    }

    @Test func realtimeInputPathKeepsTheTurns() throws {
        // What a session does: 24 kHz pcm16 arrives as base64 in 20 ms chunks, is decoded and
        // resampled to 16 kHz for the VAD.
        let scene = SpeechScene(snrDB: 20, seed: 34)
        let upsampler = try SoxrResampler(from: 16_000, to: 24_000)
        let realtime = upsampler.process(scene.samples) + upsampler.flush()
        let messages = stride(from: 0, to: realtime.count, by: 480).map {
            PCM16Buffer(format: .realtime, samples: SampleConversion.pcm16(Array(realtime[$0..<min($0 + 480, realtime.count)])))
                .base64EncodedString()
        }
        let downsampler = try SoxrResampler(from: 24_000, to: 16_000)
        var speech: [Float] = []
        for message in messages {
            speech += downsampler.process(FloatBuffer(try PCM16Buffer(format: .realtime, base64: message)).samples)
        }
        speech += downsampler.flush()
        let direct = SpeechScene.turns(in: scene.samples)
        let viaRealtime = SpeechScene.turns(in: speech)
        #expect(viaRealtime.count == direct.count)
        for (a, b) in zip(viaRealtime, direct) {
            #expect(abs(a.start - b.start) <= 40 && abs(a.end - b.end) <= 40, "\(a) vs \(b)")
        }
    }

    @Test func userSpeechDuringPlaybackPausesTheAgentAfterTheMinimumDuration() {
        // The agent is speaking for the whole scene; the user's first sentence should pause it
        // between 160 ms and 300 ms after they start talking, and interrupt it within a second
        // (at 900 ms, once its words so far are known).
        let scene = SpeechScene(snrDB: 20, seed: 35)
        var vad = EnergyVAD()
        var policy = InterruptionPolicy()
        var pauses: [Int] = []
        var interruptions: [Int] = []
        for start in stride(from: 0, through: scene.samples.count - 320, by: 320) {
            let frame = Array(scene.samples[start..<(start + 320)])
            let probability = vad.speechProbability(of: frame)
            var action = policy.process(probability: probability, voiced: Voicing.isVoiced(frame, sampleRate: 16_000), agent: .speaking, at: start / 16 + 20)
            if case .judge(let speechStartMs, let speechEndMs) = action {
                // The words asked for (not transcribed here): a request, known at once.
                action = policy.judged(words: "Tell me more.", speechStartMs: speechStartMs, speechEndMs: speechEndMs)
            }
            switch action {
            case .pause: pauses.append(start / 16 + 20)
            case .interrupt: interruptions.append(start / 16 + 20)
            default: break
            }
        }
        let onset = scene.utterances[0].startMs
        #expect(pauses.first.map { (onset + 160...onset + 300).contains($0) } == true, "\(pauses) for speech at \(onset)")
        #expect(interruptions.first.map { (onset + 900...onset + 1_000).contains($0) } == true, "\(interruptions) for speech at \(onset)")
    }
}
