import BenchmarkHarness
import Foundation
import ParleyCore
import ParleyLocal

/// A question a person asks in the conversation benchmark: flite's voice (the `flite`
/// command, which has more voices than the synthesizer Parley embeds) at the realtime rate,
/// 24 kHz, in 20 ms chunks.
struct ConversationQuestion: Sendable {
    static let sampleRate = 24_000
    static let chunkLength = 480

    var text: String
    /// The flite voice that speaks it.
    var voice: String
    /// The speech, up to and including its last voiced sample (`EndOfSpeech`), in chunks (the last one padded
    /// with silence).
    var chunks: [[Int16]]

    /// Synthesises `text` with flite's `voice`.
    /// - Throws: `ConversationBenchmarkFailure` when the `flite` command is missing or fails.
    init(text: String, voice: String) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("parley-question-\(getpid())-\(voice).wav")
        defer { try? FileManager.default.removeItem(at: file) }
        let flite = Process()
        flite.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        flite.arguments = ["flite", "-voice", voice, "-t", text, "-o", file.path]
        do {
            try flite.run()
        } catch {
            throw ConversationBenchmarkFailure("cannot run flite (Debian package flite): \(error)")
        }
        flite.waitUntilExit()
        guard flite.terminationStatus == 0, let data = FileManager.default.contents(atPath: file.path) else {
            throw ConversationBenchmarkFailure("flite -voice \(voice) failed for \"\(text)\" (is the Debian package flite installed?)")
        }
        let wav = try WAVFile.read(data)
        let resampler = try SoxrResampler(from: wav.format.sampleRate, to: Self.sampleRate)
        let speech = resampler.process(wav.buffer.mixedToMono().samples) + resampler.flush()
        guard let last = EndOfSpeech.lastVoicedSample(in: speech) else {
            throw ConversationBenchmarkFailure("flite -voice \(voice) produced no speech for \"\(text)\"")
        }
        let audio = SampleConversion.pcm16(Array(speech[...last]))
        self.text = text
        self.voice = voice
        chunks = stride(from: 0, to: audio.count, by: Self.chunkLength).map {
            let chunk = Array(audio[$0..<min($0 + Self.chunkLength, audio.count)])
            return chunk + [Int16](repeating: 0, count: Self.chunkLength - chunk.count)
        }
    }

    /// Seconds of speech.
    var duration: Double { Double(chunks.count * Self.chunkLength) / Double(Self.sampleRate) }

    /// The conversation's questions, each different, alternately in flite's `slt` (female)
    /// and `rms` (male) voices.
    static func script(turns: Int) throws -> [ConversationQuestion] {
        let questions = [
            "What is the capital of France?",
            "How far away is the moon?",
            "Can you suggest a name for my new black cat?",
            "What should I cook for dinner tonight?",
            "Why is the sky blue?",
            "How many legs does a spider have?",
            "What is a good book to read on holiday?",
            "How do I make a cup of green tea?",
            "When does the sun set in winter?",
            "Tell me a fun fact about octopuses.",
            "What is the tallest mountain in the world?",
            "How do bees make honey?",
        ]
        return try questions.prefix(turns).enumerated().map { index, text in
            try ConversationQuestion(text: text, voice: voices[index % voices.count])
        }
    }

    /// The two voices the questions alternate between.
    static let voices = ["slt", "rms"]
}

/// Why the conversation benchmark could not measure.
struct ConversationBenchmarkFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
