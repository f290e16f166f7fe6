import Foundation
import ParleyCore
import ParleyTesting
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
        #expect(empty.text.isEmpty && empty.audioDuration == 0 && empty.lastWordConfidence == nil)
        // A clearly spoken sentence: a confidence for each word, and Whisper is sure of its last word.
        let whole = try await recognizer.transcribe(audio, isFinal: true)
        #expect(whole.wordConfidences?.count == normalizedWords(whole.text).count, "\(whole)")
        #expect((whole.lastWordConfidence ?? 0) > PauseTranscriptReading.minimumLastWordConfidence, "\(whole)")
        #expect((whole.clearestWordConfidence ?? 0) > InterruptionPolicy.Configuration().minimumWordConfidence, "\(whole)")
    }

    @Test(arguments: [true, false]) func shortQuestionIsTranscribedOnceWithoutALoop(isFinal: Bool) async throws {
        let recognizer = try TestModels.recognizer()
        let audio = try await TestModels.speech("What is two plus two?")
        let transcription = try await recognizer.transcribe(audio, isFinal: isFinal)
        let words = normalizedWords(transcription.text).map { $0 == "two" ? "2" : $0 }
        #expect(words == ["what", "is", "2", "plus", "2"], "heard \(transcription.text)")
    }

    @Test func tokenBudgetGrowsWithTheAudioUpToOneWindow() {
        #expect(WhisperRepetition.tokenLimit(forAudioDuration: 1.65) == 30)
        #expect(WhisperRepetition.tokenLimit(forAudioDuration: 0) == 16)
        #expect(WhisperRepetition.tokenLimit(forAudioDuration: 10) == 96)
        #expect(WhisperRepetition.tokenLimit(forAudioDuration: 600) == 220)
        #expect(WhisperRepetition.tokenLimit(forAudioDuration: .nan) == 16)
    }

    @Test func repeatedTailKeepsOneCopy() {
        func trimmed(_ text: String) -> String {
            WhisperRepetition.trimmingRepeatedTail(text.split(separator: " ").map(String.init)).joined(separator: " ")
        }
        #expect(trimmed("what is 2 plus 2 ? what is 2 plus 2 ? what is 2") == "what is 2 plus 2 ?")
        #expect(trimmed("turn on the light light light light") == "turn on the light")
        #expect(trimmed("A B C D C D C") == "A B C D")
        #expect(trimmed("please turn off the lights") == "please turn off the lights")
        #expect(trimmed("a") == "a")
        #expect(WhisperRepetition.trimmingRepeatedTail([Int]()).isEmpty)
        let phrases = "bye bye see you see you what is 2 plus 2 ? what is 2 plus 2 ?".split(separator: " ")
        #expect(WhisperRepetition.trimmingRepeatedTail(phrases, shortestUnit: 4).joined(separator: " ")
            == "bye bye see you see you what is 2 plus 2 ?")
        let speech = "bye bye see you see you".split(separator: " ")
        #expect(WhisperRepetition.trimmingRepeatedTail(speech, shortestUnit: 4) == speech)
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

    @Test func aDecodeIsAloneOnlyWithNoOtherRunningOrWaiting() throws {
        let queue = WhisperJobQueue()
        let first = WhisperJob { _ in }, second = WhisperJob { _ in }, third = WhisperJob { _ in }
        queue.enqueue(first)
        #expect(try #require(queue.next()).alone)
        queue.enqueue(second)
        queue.enqueue(third)
        #expect(try #require(queue.next()).alone == false, "one is still running, one waits")
        queue.finished(first)
        #expect(try #require(queue.next()).alone == false, "the second one still runs")
        queue.finished(second)
        queue.finished(third)
        queue.enqueue(first)
        #expect(try #require(queue.next()).alone)
    }

    @Test func aDecodeStartingAsAnotherIsCancelledRunsAlone() async throws {
        let queue = WhisperJobQueue()
        let partial = WhisperJob { _ in }, final = WhisperJob { _ in }
        queue.enqueue(partial)
        _ = try #require(queue.next())
        partial.abort.abort()
        queue.enqueue(final)
        // The cancelled pass ends on its own worker, before or while the next job is taken.
        let ending = Task.detached { queue.finished(partial) }
        let taken = try #require(queue.next())
        #expect(taken.job.abort === final.abort)
        #expect(taken.alone, "a cancelled pass winding down is not work beside it")
        await ending.value
    }

    @Test func aCancelledDecodeThatDoesNotStopHoldsTheNextOneOnlyBriefly() throws {
        let queue = WhisperJobQueue()
        let stuck = WhisperJob { _ in }, next = WhisperJob { _ in }
        queue.enqueue(stuck)
        _ = try #require(queue.next())
        stuck.abort.abort()
        queue.enqueue(next)
        let taken = try #require(queue.next(), "taken once the grace is over, though the cancelled pass still runs")
        #expect(taken.job.abort === next.abort)
    }

    @Test func aDecodeAloneTakesOnlyCoresNothingElseRunsOn() {
        let configuration = WhisperSpeechRecognizer.Configuration(threadCount: 1, soloThreadCount: 4)
        #expect(configuration.soloThreads(spareCores: 4) == 4)
        #expect(configuration.soloThreads(spareCores: 2) == 2)
        #expect(configuration.soloThreads(spareCores: 1) == 1)
        #expect(configuration.soloThreads(spareCores: nil) == 1, "unknown: as many as when others run")
        #expect(WhisperSpeechRecognizer.Configuration(threadCount: 2, soloThreadCount: 4).soloThreads(spareCores: 1) == 2)
        #expect(SpareCores.count(cores: 64).map { (1...64).contains($0) } == true, "Linux reports its runnable threads")
    }

    @Test func audioContextCoversTheUtterance() {
        #expect(WhisperInput(samples: [Float](repeating: 0, count: 8_000), sampleRate: 16_000).audioContext == 384)
        #expect(WhisperInput(samples: [Float](repeating: 0, count: 16_000 * 8), sampleRate: 16_000).audioContext == 576)
        #expect(WhisperInput(samples: [Float](repeating: 0, count: 16_000 * 29), sampleRate: 16_000).audioContext == 0)
        #expect(WhisperInput(samples: [Float](repeating: 0, count: 800), sampleRate: 16_000).samples.count == 16_000)
    }
}
