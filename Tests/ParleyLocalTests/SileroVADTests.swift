import CWhisper
import Foundation
import ParleyCore
import Testing
@testable import ParleyLocal

@Suite struct SileroVADTests {
    static let frameLength = 512

    /// The ten round-trip sentences at the nominal speech level of -26 dBFS (ITU-T P.56),
    /// separated by 1.2 s pauses, mixed with white noise whose power equals the power of the
    /// speech signal (0 dB SNR). A frame is speech when its clean signal is within 25 dB of the
    /// loudest frame; a non-speech frame counts towards false positives only when it is at least
    /// 300 ms from every speech frame. Decisions use the default threshold of 0.5.
    @Test(arguments: [UInt64(1), 2, 3])
    func separatesSpeechFromWhiteNoiseAtZeroDecibelSNR(seed: UInt64) async throws {
        var vad = try SileroVAD(modelPath: TestModels.locator.path(of: .sileroVAD))
        let mix = try await NoisySpeech.make(sentences: TestModels.sentences, frameLength: Self.frameLength, seed: seed)
        let decided = mix.frames.map { vad.speechProbability(of: $0) > 0.5 }
        let score = mix.score(decided)
        #expect(score.speechFrames > 500 && score.distantFrames > 200)
        #expect(score.recall >= 0.95, "recall \(score.recall)")
        #expect(score.falsePositiveRate <= 0.05, "false-positive rate \(score.falsePositiveRate)")
    }

    @Test func resetForgetsEarlierFramesAndBadFramesAreTolerated() async throws {
        var vad = try SileroVAD(modelPath: TestModels.locator.path(of: .sileroVAD))
        let speech = try await TestModels.speech("Hello there, how are you doing today?")
        let silence = [Float](repeating: 0, count: Self.frameLength)
        let fresh = vad.speechProbability(of: silence)
        for start in stride(from: 0, to: speech.count - Self.frameLength, by: Self.frameLength) {
            _ = vad.speechProbability(of: Array(speech[start..<start + Self.frameLength]))
        }
        vad.reset()
        #expect(vad.speechProbability(of: silence) == fresh)
        let odd = vad.speechProbability(of: [Float.nan, .infinity] + [Float](repeating: 0.1, count: 3_000))
        #expect((0...1).contains(odd))
    }

    /// Our Swift network gives whisper.cpp's probabilities, frame by frame, on speech in noise
    /// (whisper.cpp rounds activations to half precision, hence the tolerance).
    @Test func matchesWhisperCppFrameByFrame() async throws {
        let path = try TestModels.locator.path(of: .sileroVAD)
        var vad = try SileroVAD(modelPath: path)
        var parameters = whisper_vad_default_context_params()
        parameters.n_threads = 1
        let reference = try #require(whisper_vad_init_from_file_with_params(path, parameters))
        defer { whisper_vad_free(reference) }
        whisper_vad_reset_state(reference)
        let mix = try await NoisySpeech.make(sentences: Array(TestModels.sentences.prefix(3)), frameLength: Self.frameLength, seed: 7)
        var largestDifference: Float = 0
        var speechFrames = 0
        for frame in mix.frames {
            let ours = vad.speechProbability(of: frame)
            let ran = frame.withUnsafeBufferPointer { whisper_vad_detect_speech_no_reset(reference, $0.baseAddress, Int32($0.count)) }
            #expect(ran && whisper_vad_n_probs(reference) == 1)
            let theirs = whisper_vad_probs(reference)[0]
            largestDifference = max(largestDifference, abs(ours - theirs))
            if theirs > 0.5 { speechFrames += 1 }
        }
        #expect(speechFrames > 50)
        #expect(largestDifference < 0.03, "largest difference \(largestDifference)")
    }

    @Test func aFileThatIsNotASileroModelIsRefused() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("parley-not-silero-\(UUID()).bin").path
        let real = try #require(FileManager.default.contents(atPath: TestModels.locator.path(of: .sileroVAD)))
        for broken in [Data("not a model".utf8), real.prefix(real.count / 2), real.prefix(40)] {
            try broken.write(to: URL(fileURLWithPath: path))
            #expect(throws: LocalModelError.unloadable(kind: "Silero VAD model", path: path)) {
                _ = try SileroNetwork.shared(modelPath: path)
            }
        }
        try? FileManager.default.removeItem(atPath: path)
    }

    @Test func missingModelNamesTheFileAndTheFix() {
        #expect {
            _ = try SileroVAD(modelPath: "/nonexistent/ggml-silero.bin")
        } throws: { error in
            "\(error)".contains("/nonexistent/ggml-silero.bin") && "\(error)".contains("scripts/setup")
        }
    }
}
