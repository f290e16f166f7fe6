import Foundation
import ParleyCore
import Testing
@testable import ParleyLocal

@Suite struct WhisperSpeechRecognizerTests {
    @Test func fliteSpeechRoundTripsWithLowWordErrorRate() async throws {
        let recognizer = try TestModels.recognizer()
        var pairs: [(reference: String, hypothesis: String)] = []
        for sentence in TestModels.sentences {
            let audio = try await TestModels.speech(sentence)
            let transcription = try await recognizer.transcribe(audio, isFinal: true)
            pairs.append((sentence, transcription.text))
        }
        let (errors, words) = totalWordErrors(pairs)
        let rate = Double(errors) / Double(words)
        #expect(rate <= 0.10, "WER \(rate): \(pairs.map { "\($0.reference) → \($0.hypothesis)" })")
    }
}

@Suite struct WhisperRecognizerBehaviourTests {
    @Test func partialPassesAndEmptyInput() async throws {
        let recognizer = try TestModels.recognizer()
        let audio = try await TestModels.speech("Please turn off the kitchen lights.")
        let partial = try await recognizer.transcribe(Array(audio.prefix(audio.count / 2)), isFinal: false)
        #expect(normalizedWords(partial.text).contains("turn"))
        #expect(partial.audioDuration > 0.5 && partial.processingDuration > 0)
        let empty = try await recognizer.transcribe([], isFinal: true)
        #expect(empty.text.isEmpty && empty.audioDuration == 0)
    }

    @Test func concurrentSessionsShareOneModel() async throws {
        let recognizer = try TestModels.recognizer()
        let first = try await TestModels.speech("Can you play some relaxing music?")
        let second = try await TestModels.speech("How far is it from here to the airport?")
        async let a = recognizer.transcribe(first, isFinal: true)
        async let b = recognizer.transcribe(second, isFinal: true)
        let (one, two) = try await (a, b)
        #expect(wordErrorRate(reference: "Can you play some relaxing music?", hypothesis: one.text) <= 0.2)
        #expect(wordErrorRate(reference: "How far is it from here to the airport?", hypothesis: two.text) <= 0.2)
    }

    @Test func cancellationAbortsTheDecode() async throws {
        let recognizer = try TestModels.recognizer()
        let noise = (0..<(16_000 * 25)).map { Float(sin(Double($0) * 0.37)) * 0.3 }
        let task = Task { try await recognizer.transcribe(noise, isFinal: true) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test func hostileSamplesAreSanitised() async throws {
        let recognizer = try TestModels.recognizer()
        let samples: [Float] = [.nan, .infinity, -.infinity, 7, -7] + [Float](repeating: 0, count: 800)
        let result = try await recognizer.transcribe(samples, isFinal: true)
        #expect(result.audioDuration == Double(samples.count) / 16_000)
    }

    @Test func missingModelNamesTheFileAndTheFix() {
        #expect {
            _ = try WhisperSpeechRecognizer(modelPath: "/nonexistent/ggml-tiny.en.bin")
        } throws: { error in
            "\(error)".contains("/nonexistent/ggml-tiny.en.bin") && "\(error)".contains("scripts/setup")
        }
    }

    @Test func audioContextCoversTheUtterance() {
        #expect(WhisperInput(samples: [Float](repeating: 0, count: 8_000), sampleRate: 16_000).audioContext == 512)
        #expect(WhisperInput(samples: [Float](repeating: 0, count: 16_000 * 8), sampleRate: 16_000).audioContext == 576)
        #expect(WhisperInput(samples: [Float](repeating: 0, count: 16_000 * 29), sampleRate: 16_000).audioContext == 0)
        #expect(WhisperInput(samples: [Float](repeating: 0, count: 800), sampleRate: 16_000).samples.count == 16_000)
    }
}
