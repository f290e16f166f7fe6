import BenchmarkHarness
import Foundation
import ParleyCore
import ParleyLocal
import ParleyOpenAI

/// The embedded offline stack: Whisper tiny.en latency and real-time factor on a 2 s command,
/// flite time to first audio and real-time factor, Silero VAD speed, SmolLM2 through
/// llama-server and the OpenAI client (time to first token, tokens/s), peak memory, and the
/// voice-to-voice latency of the whole stack (`runEmbeddedVoiceBenchmarks`).
func runEmbeddedBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    let locator = ModelLocator()
    var results: [BenchmarkResult] = []
    let synthesizer = try FliteSpeechSynthesizer()
    results += try await measureSpeechSynthesis(synthesizer, runs: quick ? 3 : 10)

    let command = try await speech("Please turn off the kitchen lights.", synthesizer: synthesizer)
    let recognizer = try WhisperSpeechRecognizer(modelPath: locator.path(of: .whisperTinyEnglish))
    let fullContext = try WhisperSpeechRecognizer(
        modelPath: locator.path(of: .whisperTinyEnglish),
        configuration: .init(sizesAudioContextToUtterance: false)
    )
    results += try await measureRecognition(recognizer, fullContext: fullContext, command: command, runs: quick ? 3 : 10)
    results += try measureVAD(modelPath: locator.path(of: .sileroVAD), audio: command, repeats: quick ? 5 : 30)
    results.append(BenchmarkResult(
        area: "embedded", name: "peak RSS of this process, Whisper ×2 + Silero + flite loaded",
        value: Double(peakResidentKilobytes(of: "self") ?? 0) / 1024, unit: "MB", target: "", meetsTarget: nil
    ))

    let server = try LocalLLMServer(configuration: .smolLM2(locator: locator))
    try await server.start()
    do {
        results += try await measureLanguageModel(server: server, runs: quick ? 3 : 10)
        await server.stop()
    } catch {
        await server.stop()
        throw error
    }
    return results + (try await runEmbeddedVoiceBenchmarks(quick: quick))
}

private func measureSpeechSynthesis(_ synthesizer: FliteSpeechSynthesizer, runs: Int) async throws -> [BenchmarkResult] {
    let reply = "Sure, I have turned off the kitchen lights. Is there anything else I can do for you?"
    let clock = ContinuousClock()
    var firstAudio: [Double] = []
    var factors: [Double] = []
    for _ in 0..<runs {
        let start = clock.now
        var first: Duration?
        var samples = 0
        for try await chunk in synthesizer.synthesize(reply, options: SpeechOptions()) {
            if first == nil { first = clock.now - start }
            samples += chunk.count
        }
        let total = (clock.now - start).timeInterval
        firstAudio.append((first ?? .zero).timeInterval * 1000)
        factors.append(total / (Double(samples) / Double(synthesizer.sampleRate)))
    }
    return [
        BenchmarkResult(area: "embedded", name: "TTS flite time to first audio, 2-sentence reply (p50)",
                        value: percentile(firstAudio, 50), unit: "ms", target: "<= 100 ms",
                        meetsTarget: percentile(firstAudio, 50) <= 100),
        BenchmarkResult(area: "embedded", name: "TTS flite real-time factor (p50)",
                        value: percentile(factors, 50), unit: "x", target: "<= 0.05",
                        meetsTarget: percentile(factors, 50) <= 0.05),
    ]
}

private func measureRecognition(
    _ recognizer: WhisperSpeechRecognizer, fullContext: WhisperSpeechRecognizer, command: [Float], runs: Int
) async throws -> [BenchmarkResult] {
    let duration = Double(command.count) / 16_000
    _ = try await recognizer.transcribe(command, isFinal: true)
    _ = try await fullContext.transcribe(command, isFinal: true)
    var finals: [Double] = []
    var partials: [Double] = []
    var full: [Double] = []
    for _ in 0..<runs {
        finals.append(try await recognizer.transcribe(command, isFinal: true).processingDuration)
        partials.append(try await recognizer.transcribe(Array(command.prefix(command.count / 2)), isFinal: false).processingDuration)
        full.append(try await fullContext.transcribe(command, isFinal: true).processingDuration)
    }
    let latency = percentile(finals, 50)
    let label = String(format: "%.2f s", duration)
    return [
        BenchmarkResult(area: "embedded", name: "ASR Whisper tiny.en final latency, \(label) command (p50)",
                        value: latency * 1000, unit: "ms", target: "", meetsTarget: nil),
        BenchmarkResult(area: "embedded", name: "ASR Whisper tiny.en real-time factor, \(label) command (p50)",
                        value: latency / duration, unit: "x", target: "<= 0.35", meetsTarget: latency / duration <= 0.35),
        BenchmarkResult(area: "embedded", name: "ASR partial pass latency, first half of the command (p50)",
                        value: percentile(partials, 50) * 1000, unit: "ms", target: "", meetsTarget: nil),
        BenchmarkResult(area: "embedded", name: "ASR final latency with the full 30 s audio context (p50)",
                        value: percentile(full, 50) * 1000, unit: "ms", target: "", meetsTarget: nil),
    ]
}

private func measureVAD(modelPath: String, audio: [Float], repeats: Int) throws -> [BenchmarkResult] {
    var vad = try SileroVAD(modelPath: modelPath)
    let frames = stride(from: 0, to: audio.count - vad.frameLength, by: vad.frameLength).map {
        Array(audio[$0..<$0 + vad.frameLength])
    }
    let clock = ContinuousClock()
    let start = clock.now
    for _ in 0..<repeats {
        vad.reset()
        for frame in frames { _ = vad.speechProbability(of: frame) }
    }
    let elapsed = (clock.now - start).timeInterval
    let audioSeconds = Double(frames.count * vad.frameLength * repeats) / Double(vad.sampleRate)
    return [
        BenchmarkResult(area: "embedded", name: "VAD Silero speed, 32 ms frames one at a time",
                        value: audioSeconds / elapsed, unit: "x real time", target: ">= 100x",
                        meetsTarget: audioSeconds / elapsed >= 100),
    ]
}

/// Questions a voice assistant gets, each asked once in the "different question" runs.
private let variedQuestions = [
    "How do I boil an egg?", "What is the capital of France?", "Can you suggest a name for a cat?",
    "How long should I let bread dough rise?", "What does a barometer measure?", "Why is the sky blue?",
    "How many legs does a spider have?", "What should I pack for a day hike?", "How do I say thank you in Spanish?",
    "What is a good stretch for a stiff neck?", "When do tulips bloom?", "How far away is the moon?",
]

/// SmolLM2 through llama-server and the OpenAI client: time to first token when the prompt is
/// new after the system prompt (a different question each time: only the shared system prompt
/// can come from llama-server's prompt cache) and when it was just asked (the same question
/// again: the whole prompt is cached), and the decode speed; medians over the runs.
private func measureLanguageModel(server: LocalLLMServer, runs: Int) async throws -> [BenchmarkResult] {
    let model = OpenAILanguageModel(configuration: OpenAIConfiguration(baseURL: server.baseURL, model: "smollm2", retry: .none))
    func request(_ question: String) -> ChatRequest {
        ChatRequest(messages: [.system("You are a helpful voice assistant. Answer briefly."), .user(question)], temperature: 0, maxTokens: 128)
    }
    _ = try await firstTokenAndRate(model, request("Hello!"))  // warm-up
    var missFirstTokens: [Double] = []
    var hitFirstTokens: [Double] = []
    var rates: [Double] = []
    for run in 0..<runs {
        let question = variedQuestions[run % variedQuestions.count]
        let miss = try await firstTokenAndRate(model, request(question))
        missFirstTokens.append(miss.firstTokenMs)
        rates.append(miss.tokensPerSecond)
        hitFirstTokens.append(try await firstTokenAndRate(model, request(question)).firstTokenMs)
    }
    let serverMemory = server.processID.flatMap { peakResidentKilobytes(of: String($0)) } ?? 0
    let threads = server.configuration.threadCount
    let missP50 = percentile(missFirstTokens, 50)
    return [
        BenchmarkResult(area: "embedded", name: "LLM SmolLM2-135M Q8_0 time to first token via OpenAI client, a different question each time (prompt cache: system prompt only), p50",
                        value: missP50, unit: "ms", target: "<= 150 ms", meetsTarget: missP50 <= 150),
        BenchmarkResult(area: "embedded", name: "LLM SmolLM2-135M Q8_0 time to first token via OpenAI client, the same question asked again (whole prompt cached), p50",
                        value: percentile(hitFirstTokens, 50), unit: "ms", target: "", meetsTarget: nil),
        BenchmarkResult(area: "embedded", name: "LLM SmolLM2-135M Q8_0 decode speed, \(threads) thread\(threads == 1 ? "" : "s"), different questions (p50)",
                        value: percentile(rates, 50), unit: "tokens/s", target: ">= 50 tokens/s",
                        meetsTarget: percentile(rates, 50) >= 50),
        BenchmarkResult(area: "embedded", name: "peak RSS of llama-server with SmolLM2",
                        value: Double(serverMemory) / 1024, unit: "MB", target: "", meetsTarget: nil),
    ]
}

/// Streams one reply: milliseconds to its first token, and tokens per second after it.
private func firstTokenAndRate(_ model: OpenAILanguageModel, _ request: ChatRequest) async throws -> (firstTokenMs: Double, tokensPerSecond: Double) {
    let clock = ContinuousClock()
    let start = clock.now
    var first: ContinuousClock.Instant?
    var tokens = 0
    for try await event in model.stream(request) {
        switch event {
        case .textDelta:
            if first == nil { first = clock.now }
        case let .finished(_, usage):
            tokens = usage?.completionTokens ?? 0
        case .toolCall:
            break
        }
    }
    guard let first, tokens > 1 else { throw EmbeddedBenchmarkFailure("SmolLM2 produced no tokens") }
    return ((first - start).timeInterval * 1000, Double(tokens - 1) / (clock.now - first).timeInterval)
}

/// Synthesises `text` and returns it as Float samples.
private func speech(_ text: String, synthesizer: FliteSpeechSynthesizer) async throws -> [Float] {
    var samples: [Float] = []
    for try await chunk in synthesizer.synthesize(text, options: SpeechOptions()) {
        samples += chunk.map { Float($0) / 32_768 }
    }
    return samples
}

/// `VmHWM` (peak resident set) in kB of a process (`self` or a pid) from /proc; nil elsewhere.
private func peakResidentKilobytes(of process: String) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8) else { return nil }
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
    return line?.split(separator: " ").dropFirst().first.flatMap { Int($0) }
}

struct EmbeddedBenchmarkFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
