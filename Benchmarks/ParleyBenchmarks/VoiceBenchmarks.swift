import BenchmarkHarness
import Foundation
import ParleyCore
import ParleyLocal
import ParleyOpenAI
import ParleyTesting

/// The neural voice next to flite (issue 29): time to first audio of a two-sentence reply
/// while SmolLM2 generates on the supervised llama-server, real-time factor, and how well the
/// embedded Whisper understands each voice on the everyday sentences.
func runVoiceBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    let locator = ModelLocator()
    let piper = try PiperSpeechSynthesizer(modelPath: locator.path(of: .piperJoe), onnxRuntimePath: locator.onnxRuntimeLibraryPath())
    let flite = try FliteSpeechSynthesizer()
    let voices: [(name: String, synthesizer: any SpeechSynthesizer)] = [("Piper en_US-joe-medium", piper), ("flite cmu_us_slt", flite)]
    let recognizer = try WhisperSpeechRecognizer(modelPath: locator.path(of: .whisperTinyEnglish))
    let sentences = quick ? Array(EverydaySentences.all.prefix(3)) : EverydaySentences.all
    var results: [BenchmarkResult] = []

    var errorRates: [String: Double] = [:]
    for voice in voices {
        var pairs: [(reference: String, hypothesis: String)] = []
        var busySeconds = 0.0, audioSeconds = 0.0
        for sentence in sentences {
            let start = ContinuousClock.now
            let audio = try await speak(sentence, with: voice.synthesizer)
            busySeconds += (ContinuousClock.now - start).timeInterval
            audioSeconds += Double(audio.count) / Double(voice.synthesizer.sampleRate)
            let heard = try await recognizer.transcribe(try resampled(audio, from: voice.synthesizer.sampleRate), isFinal: true)
            pairs.append((sentence, heard.text))
        }
        let (errors, words) = totalWordErrors(pairs)
        errorRates[voice.name] = Double(errors) / Double(words)
        log("\(voice.name): \(pairs.map { "\($0.reference) → \($0.hypothesis)" }.joined(separator: " | "))")
        results.append(BenchmarkResult(
            area: "voice", name: "\(voice.name) real-time factor (synthesis time / audio time), \(sentences.count) everyday sentences, idle LLM",
            value: busySeconds / audioSeconds, unit: "x", target: "", meetsTarget: nil
        ))
    }
    for voice in voices {
        let rate = errorRates[voice.name] ?? .nan
        let isPiper = voice.synthesizer is PiperSpeechSynthesizer
        let fliteRate = errorRates["flite cmu_us_slt"] ?? .nan
        results.append(BenchmarkResult(
            area: "voice", name: "\(voice.name) intelligibility: Whisper tiny.en WER on its speech of \(sentences.count) everyday sentences",
            value: rate * 100, unit: "%", target: isPiper ? "<= flite's" : "", meetsTarget: isPiper ? rate <= fliteRate : nil
        ))
    }

    let server = try LocalLLMServer(configuration: .smolLM2(locator: locator))
    try await server.start()
    do {
        let model = OpenAILanguageModel(configuration: OpenAIConfiguration(baseURL: server.baseURL, model: "smollm2", retry: .none))
        for voice in voices {
            results.append(try await measureFirstAudio(voice: voice.name, synthesizer: voice.synthesizer, generating: model, runs: quick ? 3 : 10))
        }
        await server.stop()
    } catch {
        await server.stop()
        throw error
    }
    return results
}

/// The reply of the time-to-first-audio figure, as the model would stream it.
private let twoSentenceReply = "Sure, the next train to the airport leaves at half past seven. It takes about forty minutes to get there."

/// Time from the moment the segmenter releases a reply's first clause to the first chunk of
/// its audio at the pipeline's 24 kHz (synthesised, then resampled with libsoxr), with
/// SmolLM2 generating a long answer on llama-server the whole time (its 2 decode threads share
/// the 2 cores with the voice).
private func measureFirstAudio(voice: String, synthesizer: any SpeechSynthesizer, generating model: OpenAILanguageModel, runs: Int) async throws -> BenchmarkResult {
    let load = Task {
        let request = ChatRequest(messages: [.user("Tell me a very long story about a dragon and a castle.")], temperature: 0.8, maxTokens: 400)
        while !Task.isCancelled {
            for try await _ in model.stream(request) where Task.isCancelled { break }
        }
    }
    defer { load.cancel() }
    var delays: [Double] = []
    for run in 0...runs {
        var segmenter = SentenceSegmenter()
        var firstClause: String?
        for word in twoSentenceReply.split(separator: " ", omittingEmptySubsequences: false) {
            if let clause = segmenter.append(String(word) + " ").first { firstClause = clause; break }
        }
        guard let clause = firstClause ?? segmenter.flush().first else { throw EmbeddedVoiceFailure("the segmenter released no clause") }
        let resampler = try SoxrResampler(from: synthesizer.sampleRate, to: 24_000)
        let start = ContinuousClock.now
        var firstAudio: Duration?
        for try await chunk in synthesizer.synthesize(clause, options: SpeechOptions()) {
            if !resampler.process(chunk.map { Float($0) / 32_768 }).isEmpty { firstAudio = ContinuousClock.now - start; break }
        }
        guard let firstAudio else { throw EmbeddedVoiceFailure("\(voice) made no audio for \(clause)") }
        if run > 0 { delays.append(firstAudio.timeInterval * 1_000) }  // Run 0 warms up.
    }
    let p50 = percentile(delays, 50)
    return BenchmarkResult(
        area: "voice",
        name: "\(voice) time to first audio of a two-sentence reply: first clause released by the segmenter → first 24 kHz chunk, while SmolLM2 generates (p50)",
        value: p50, unit: "ms", target: "<= 150 ms", meetsTarget: p50 <= 150
    )
}

/// All of `text`'s audio from `synthesizer`.
private func speak(_ text: String, with synthesizer: any SpeechSynthesizer) async throws -> [Int16] {
    var samples: [Int16] = []
    for try await chunk in synthesizer.synthesize(text, options: SpeechOptions()) { samples += chunk }
    return samples
}

/// `samples` at Whisper's 16 kHz, as Float in [-1, 1].
private func resampled(_ samples: [Int16], from rate: Int) throws -> [Float] {
    let floats = samples.map { Float($0) / 32_768 }
    guard rate != 16_000 else { return floats }
    let resampler = try SoxrResampler(from: rate, to: 16_000)
    return resampler.process(floats) + resampler.flush()
}

private struct EmbeddedVoiceFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

private func log(_ line: String) {
    FileHandle.standardError.write(Data("voice: \(line)\n".utf8))
}
