import Foundation
import ParleyCore
import Testing
@testable import ParleyLocal

@Suite struct FliteSpeechSynthesizerTests {
    @Test func streamsSixteenKilohertzSpeechInBoundedChunks() async throws {
        let synthesizer = try FliteSpeechSynthesizer(chunkLength: 800)
        var chunks: [[Int16]] = []
        for try await chunk in synthesizer.synthesize("Hello there. How can I help you today?", options: SpeechOptions()) {
            chunks.append(chunk)
        }
        let samples = chunks.flatMap { $0 }
        #expect(synthesizer.sampleRate == 16_000)
        #expect(chunks.allSatisfy { !$0.isEmpty && $0.count <= 800 })
        #expect(samples.count > 16_000 && samples.count < 16_000 * 6)
        #expect(samples.map { abs(Int($0)) }.max() ?? 0 > 3_000)
    }

    @Test func speedScalesTheDuration() async throws {
        let normal = try await TestModels.speech("The quick brown fox jumps over the lazy dog.")
        let fast = try await TestModels.speech("The quick brown fox jumps over the lazy dog.", speed: 2)
        let slow = try await TestModels.speech("The quick brown fox jumps over the lazy dog.", speed: 0.5)
        let fastRatio = Double(fast.count) / Double(normal.count)
        let slowRatio = Double(slow.count) / Double(normal.count)
        #expect(fastRatio > 0.4 && fastRatio < 0.7, "fast/normal \(fastRatio)")
        #expect(slowRatio > 1.6 && slowRatio < 2.4, "slow/normal \(slowRatio)")
    }

    /// flite dithers its excitation, so repeated runs differ slightly: compare lengths and energy.
    @Test func concurrentRequestsGetTheSameAudioAsOneAtATime() async throws {
        let texts = ["One little sentence.", "A second, rather different sentence!", "And a third one?"]
        var expected: [[Float]] = []
        for text in texts { expected.append(try await TestModels.speech(text)) }
        let concurrent = try await withThrowingTaskGroup(of: (Int, [Float]).self) { group in
            for round in 0..<3 {
                for (index, text) in texts.enumerated() {
                    group.addTask { (index, try await TestModels.speech(text + String(repeating: " ", count: round))) }
                }
            }
            return try await group.reduce(into: [(Int, [Float])]()) { $0.append($1) }
        }
        #expect(concurrent.count == 9)
        for (index, audio) in concurrent {
            #expect(audio.count == expected[index].count)
            let ratio = energy(audio) / energy(expected[index])
            #expect(ratio > 0.97 && ratio < 1.03, "energy ratio \(ratio)")
        }
    }

    @Test func textWithoutWordsYieldsNothingAndAccentsAreSpoken() async throws {
        #expect(try await TestModels.speech(" ... ?! \n\t ").isEmpty)
        let cafe = try await TestModels.speech("Caf\u{E9} \u{2615} au lait.")
        #expect(cafe.count > 8_000)
    }

    @Test func cancellingTheConsumerStopsSynthesis() async throws {
        let synthesizer = try FliteSpeechSynthesizer()
        let longText = String(repeating: "This sentence is one of very many. ", count: 200)
        let consumer = Task {
            var received = 0
            for try await chunk in synthesizer.synthesize(longText, options: SpeechOptions()) {
                received += chunk.count
                if received > 16_000 { return received }
            }
            return received
        }
        let received = try await consumer.value
        #expect(received > 16_000 && received < 16_000 * 10)
    }

    @Test func textIsSplitIntoBoundedAsciiSentences() {
        let pieces = FliteText.sentences(of: "Hi! How are you?\nFine; thanks. " + String(repeating: "word, and more words ", count: 40))
        #expect(Array(pieces.prefix(4)) == ["Hi!", "How are you?", "Fine;", "thanks."])
        #expect(pieces.count > 5)
        #expect(pieces.allSatisfy { $0.count <= FliteText.maximumPieceLength && $0.unicodeScalars.allSatisfy(\.isASCII) })
        #expect(FliteText.sentences(of: "Na\u{EF}ve \u{1F600} r\u{E9}sum\u{E9}.") == ["Naive   resume."])
    }

    private func energy(_ samples: [Float]) -> Double {
        samples.reduce(0) { $0 + Double($1) * Double($1) }
    }
}
