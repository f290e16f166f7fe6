import Foundation
import ParleyCore
import Testing

/// `parley say` → `parley transcribe` with the embedded engines (the Piper voice, flite and whisper.cpp tiny.en),
/// run as real processes.
@Suite("say → transcribe round trip")
struct SpeechRoundTripTests {
    /// Lower-case words without punctuation.
    static func words(_ text: String) -> [String] {
        text.lowercased().split { !$0.isLetter && !$0.isNumber && $0 != "'" }.map(String.init)
    }

    /// The word error rate of `hypothesis` against `reference` (edit distance over words).
    static func wordErrorRate(_ hypothesis: String, reference: String) -> Double {
        let said = words(reference), heard = words(hypothesis)
        var previous = Array(0...heard.count)
        for (i, word) in said.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: heard.count)
            for j in heard.indices {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (word == heard[j] ? 0 : 1))
            }
            previous = current
        }
        return Double(previous[heard.count]) / Double(max(said.count, 1))
    }

    @Test("a sentence spoken by the Piper voice is transcribed by whisper.cpp (WER ≤ 25%), through pipes and files")
    func roundTrip() async throws {
        let work = try TemporaryDirectory()
        defer { work.remove() }
        let sentence = "The weather today is sunny with a light breeze."

        let said = try await ParleyProcess.run(["say", "-o", "sentence.wav"], input: Data((sentence + "\n").utf8), directory: work.url)
        #expect(said.status == 0, "\(said.errorOutput)")
        #expect(said.output.isEmpty)
        #expect(said.errorOutput.hasPrefix("Wrote sentence.wav ("), "no progress spinner on a pipe")
        let wav = try WAVFile.read(Data(contentsOf: work.url.appendingPathComponent("sentence.wav")))
        #expect(wav.format == AudioFormat(sampleRate: 22_050))
        #expect((1.5...6).contains(Double(wav.samples.count) / 22_050), "a sentence takes a few seconds to say")

        let heard = try await ParleyProcess.run(["transcribe", "sentence.wav"], directory: work.url)
        #expect(heard.status == 0, "\(heard.errorOutput)")
        #expect(heard.errorOutput.isEmpty)
        let transcript = heard.output.trimmingCharacters(in: .newlines)
        #expect(!transcript.contains("\n"))
        #expect(Self.wordErrorRate(transcript, reference: sentence) <= 0.25, "heard: \(transcript)")

        let json = try await ParleyProcess.run(["transcribe", "--json", "sentence.wav"], directory: work.url)
        let line = try JSONValue(parsing: json.output)
        #expect(line["text"]?.stringValue == transcript, "greedy decoding is deterministic")
        #expect(abs((line["audio_seconds"]?.numberValue ?? 0) - Double(wav.samples.count) / 22_050) < 0.01)
    }

    @Test("embedded engine errors: an unknown voice of Piper or flite, a missing model directory")
    func engineErrors() async throws {
        let work = try TemporaryDirectory()
        defer { work.remove() }
        let voice = try await ParleyProcess.run(["say", "Hi", "-o", "x.wav", "--voice", "alloy"], directory: work.url)
        #expect(voice.status == 1)
        #expect(voice.errorOutput == "error: the Piper voice has no voice 'alloy' (voices: joe)\n")
        let fliteVoice = try await ParleyProcess.run(
            ["say", "Hi", "-o", "x.wav", "--voice", "alloy"], environment: ["PARLEY_TTS": "flite"], directory: work.url
        )
        #expect(fliteVoice.errorOutput == "error: flite has no voice 'alloy' (voices: slt)\n")

        try TalkCommandTests.writeTone(work.path("tone.wav"), seconds: 0.5)
        let missing = try await ParleyProcess.run(["transcribe", "tone.wav"], environment: ["PARLEY_MODEL_DIR": work.path("models")], directory: work.url)
        #expect(missing.status == 1)
        #expect(missing.errorOutput.hasPrefix("error: speech-to-text (whisper.cpp): The model file for Whisper speech-to-text is missing: \(work.path("models"))/ggml-tiny.en.bin."))
        #expect(missing.errorOutput.filter { $0 == "\n" }.count == 1)
    }

    @Test("word error rate")
    func wordErrorRate() {
        #expect(Self.wordErrorRate("the cat sat", reference: "The cat sat.") == 0)
        #expect(Self.wordErrorRate("the cat", reference: "the cat sat") == 1.0 / 3)
        #expect(Self.wordErrorRate("a dog sat down", reference: "the cat sat") == 1)
    }
}
