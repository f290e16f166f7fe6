import BenchmarkHarness
import Foundation
import ParleyCore
import ParleyLocal
import ParleyNet
import ParleyServer
import ParleyTesting
import ParleySync

/// Phone calls (issue 27): the embedded Whisper's word error rate on telephone audio against
/// wideband, the voice-to-voice latency over the Twilio path (a simulated Twilio streaming
/// 8 kHz μ-law in real time, 20 ms a message, to a real server) on the embedded stack and on
/// instant providers, and how many concurrent calls the server holds.
func runTelephonyBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    var results = try await measureTelephoneWordErrorRate()
    results += try await measureEmbeddedCalls(turns: quick ? 3 : 10)
    let search = quick
        ? CapacitySearch(ladder: [1, 25], ceiling: 100, precision: 0.5)
        : CapacitySearch(ladder: [1, 50, 100, 200], ceiling: 3_200)
    results += try await PhoneCapacityBenchmarks.measure(door: .twilio, area: "telephony", quick: quick)
    results += try await measureConcurrentCalls(search: search)
    return results
}

// MARK: - Word error rate

/// Whisper tiny.en on the ten test sentences (flite, 16 kHz) as they are and as a phone call
/// delivers them: band-limited to 8 kHz (libsoxr), μ-law encoded and decoded, and brought back
/// to 16 kHz as a call's audio is (without and with `TelephoneBandwidthExtension`).
private func measureTelephoneWordErrorRate() async throws -> [BenchmarkResult] {
    let synthesizer = try FliteSpeechSynthesizer()
    let recognizer = try WhisperSpeechRecognizer(modelPath: ModelLocator().path(of: .whisperTinyEnglish))
    var wideband: [(reference: String, hypothesis: String)] = []
    var telephone: [(reference: String, hypothesis: String)] = []
    var extended: [(reference: String, hypothesis: String)] = []
    for sentence in EverydaySentences.all {
        var speech: [Int16] = []
        for try await chunk in synthesizer.synthesize(sentence, options: SpeechOptions()) { speech += chunk }
        let audio = SampleConversion.float(speech)
        wideband.append((sentence, try await recognizer.transcribe(audio, isFinal: true).text))
        let phone = try TelephoneAudio.overThePhone(audio, rate: synthesizer.sampleRate)
        telephone.append((sentence, try await recognizer.transcribe(phone, isFinal: true).text))
        var widening = TelephoneBandwidthExtension()
        extended.append((sentence, try await recognizer.transcribe(widening.process(phone), isFinal: true).text))
    }
    let widebandRate = rate(wideband)
    let telephoneRate = rate(telephone)
    for (pair, heard) in zip(extended, wideband) where pair.hypothesis != heard.hypothesis {
        log("telephone: \"\(pair.hypothesis)\" (wideband: \"\(heard.hypothesis)\")")
    }
    let extendedRate = rate(extended)
    let gap = (extendedRate - widebandRate) * 100
    return [
        BenchmarkResult(area: "telephony", name: "ASR Whisper tiny.en WER, 10 flite sentences at 16 kHz",
                        value: widebandRate * 100, unit: "%", target: "", meetsTarget: nil),
        BenchmarkResult(area: "telephony", name: "ASR Whisper tiny.en WER, the same as 8 kHz μ-law phone audio",
                        value: telephoneRate * 100, unit: "%", target: "", meetsTarget: nil),
        BenchmarkResult(area: "telephony", name: "ASR Whisper tiny.en WER, 8 kHz μ-law with the telephone bandwidth extension (what calls use)",
                        value: extendedRate * 100, unit: "%", target: "", meetsTarget: nil),
        BenchmarkResult(area: "telephony", name: "ASR WER of 8 kHz μ-law with the bandwidth extension minus 16 kHz",
                        value: gap, unit: "points", target: "<= 3 points", meetsTarget: gap <= 3),
    ]
}

private func rate(_ pairs: [(reference: String, hypothesis: String)]) -> Double {
    let (errors, words) = totalWordErrors(pairs)
    return Double(errors) / Double(max(words, 1))
}

/// Caller audio as Twilio carries it.
enum TelephoneAudio {
    /// Samples per 20 ms Media Streams message.
    static let chunkLength = 160

    /// `audio` (at `rate`) band-limited to 8 kHz, through μ-law and back, at 16 kHz (the
    /// call's input resampler), before the bandwidth extension.
    static func overThePhone(_ audio: [Float], rate: Int) throws -> [Float] {
        let law = G711.decode(G711.encode(try narrowband(audio, rate: rate), law: .muLaw), law: .muLaw)
        var up = VoiceSessionProviders.sincResampler(from: G711.sampleRate, to: 16_000)
        return up.process(SampleConversion.float(law)) + up.flush()
    }

    /// `audio` (at `rate`) as 8 kHz samples.
    static func narrowband(_ audio: [Float], rate: Int) throws -> [Int16] {
        let down = try SoxrResampler(from: rate, to: G711.sampleRate)
        return SampleConversion.pcm16(down.process(audio) + down.flush())
    }

    /// `question` as a caller's phone sends it: 20 ms `media` payloads up to its last voiced sample.
    static func question(_ question: ConversationQuestion) throws -> [String] {
        let narrow = try narrowband(SampleConversion.float(question.chunks.flatMap { $0 }), rate: ConversationQuestion.sampleRate)
        return payloads(Array(narrow[...(EndOfSpeech.lastVoicedSample(in: narrow) ?? narrow.count - 1)]))
    }

    /// 20 ms `media` payloads (base64 μ-law) of `samples`, the last one padded with silence.
    static func payloads(_ samples: [Int16]) -> [String] {
        stride(from: 0, to: samples.count, by: chunkLength).map { start in
            let chunk = Array(samples[start..<min(start + chunkLength, samples.count)])
            return Base64Codec.encode(G711.encode(chunk + [Int16](repeating: 0, count: chunkLength - chunk.count), law: .muLaw))
        }
    }
}

// MARK: - Calls

/// One call's question: lead-in, speech, then silence until answered; paced at 20 ms a message.
struct CallScript: Sendable {
    /// Lead-in and speech payloads.
    var payloads: [String]
    /// Audio time from the first message to the last speech sample.
    var speechEnd: Duration
    /// The payload of 20 ms of silence.
    static let silence = TelephoneAudio.payloads([Int16](repeating: 0, count: TelephoneAudio.chunkLength))[0]

    init(leadInMs: Int, speech: [Int16]) {
        let lead = [Int16](repeating: 0, count: leadInMs * 8)
        payloads = TelephoneAudio.payloads(lead + speech)
        speechEnd = .microseconds((lead.count + speech.count) * 125)
    }
}

/// The Twilio auth token the benchmark servers have, with which the simulated Twilio signs.
let telephonyBenchmarkAuthToken = "bench-twilio-auth-token-0123456789"

/// A simulated Twilio call's media stream, opened the way Twilio opens one: the signed voice
/// webhook, then the stream's `connected` and `start` messages with the TwiML's token.
struct SimulatedTwilioStream {
    let socket: WebSocketConnection
    let streamSID: String
    let callSID: String

    /// Places a call to the server on `port` and opens its media stream.
    static func open(port: Int) async throws -> SimulatedTwilioStream {
        let base = "http://127.0.0.1:\(port)"
        let callSID = "CA" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let form = [(name: "CallSid", value: callSID), (name: "From", value: "+14155550100"), (name: "To", value: "+15005550006")]
        let webhook = base + "/v1/telephony/twilio/voice"
        let signature = TwilioSignature.expected(url: webhook, parameters: form, authToken: telephonyBenchmarkAuthToken)
        let response = try await HTTPClient.shared.send(HTTPClient.Request(
            url: URL(string: webhook)!, method: "POST",
            headers: ["Content-Type": "application/x-www-form-urlencoded", "X-Twilio-Signature": signature],
            body: Data("CallSid=\(callSID)&From=%2B14155550100&To=%2B15005550006".utf8)
        ))
        let twiML = String(decoding: response.body, as: UTF8.self)
        guard response.status == 200, let token = twiML.between(#"name="parley_token" value=""#, #"""#) else {
            throw EmbeddedBenchmarkFailure("the webhook answered \(response.status): \(twiML.prefix(200))")
        }
        let socket = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(port)/v1/telephony/twilio/stream")!)
        let streamSID = "MZ" + callSID.dropFirst(2)
        try socket.send(.text(#"{"event":"connected","protocol":"Call","version":"1.0.0"}"#))
        try socket.send(.text(#"{"event":"start","sequenceNumber":"1","start":{"accountSid":"AC1","streamSid":"\#(streamSID)","callSid":"\#(callSID)","tracks":["inbound"],"mediaFormat":{"encoding":"audio/x-mulaw","sampleRate":8000,"channels":1},"customParameters":{"parley_token":"\#(token)"}},"streamSid":"\#(streamSID)"}"#))
        return SimulatedTwilioStream(socket: socket, streamSID: streamSID, callSID: callSID)
    }

    /// Sends the `index`th 20 ms `media` message of the call (from 0).
    func sendMedia(_ payload: String, index: Int) throws {
        try socket.send(.text(#"{"event":"media","sequenceNumber":"\#(index + 2)","media":{"track":"inbound","chunk":"\#(index + 1)","timestamp":"\#(index * 20)","payload":"\#(payload)"},"streamSid":"\#(streamSID)"}"#))
    }

    /// Tells the server that the audio it marked `name` has played (Twilio's `mark` echo).
    func acknowledgeMark(_ name: String) throws {
        try socket.send(.text(#"{"event":"mark","streamSid":"\#(streamSID)","mark":{"name":"\#(name)"}}"#))
    }

    /// Hangs up: the stream's `stop` message after `mediaSent` media messages.
    func stop(mediaSent: Int) {
        try? socket.send(.text(#"{"event":"stop","sequenceNumber":"\#(mediaSent + 2)","streamSid":"\#(streamSID)","stop":{"accountSid":"AC1","callSid":"\#(callSID)"}}"#))
    }
}

/// Places one call through the webhook and the media stream, asks the question in real time
/// and returns the time from the end of the question's speech to the first `media` of the answer.
func placeCall(port: Int, script: CallScript, deadline: Duration = .seconds(20)) async throws -> Duration {
    let stream = try await SimulatedTwilioStream.open(port: port)
    let socket = stream.socket
    defer { socket.close() }
    let clock = ContinuousClock()
    let firstMedia = Locked<ContinuousClock.Instant?>(nil)
    let listener = Task {
        for await message in socket.messages {
            if case .text(let text) = message, text.contains(#""event":"media""#) {
                firstMedia.withLock { $0 = $0 ?? clock.now }
            }
        }
    }
    defer { listener.cancel() }
    let start = clock.now
    var index = 0
    while firstMedia.withLock({ $0 }) == nil {
        let due = start + .milliseconds(20 * (index + 1))
        guard due - start < script.speechEnd + deadline else { throw EmbeddedBenchmarkFailure("no answer within \(deadline)") }
        try await Task.sleep(until: due, clock: clock)
        let payload = index < script.payloads.count ? script.payloads[index] : CallScript.silence
        try stream.sendMedia(payload, index: index)
        index += 1
    }
    stream.stop(mediaSent: index)
    // The audio clock: the message carrying sample s is sent at start + its chunk's end.
    return firstMedia.withLock { $0! } - (start + script.speechEnd)
}

/// Voice-to-voice over the Twilio path on the embedded stack with the defaults (Silero VAD,
/// whisper.cpp, the local LLM, the embedded voice): one call holding a conversation of `turns`
/// different flite questions in two voices (`ConversationQuestion`), each asked after the
/// previous answer has played (`TwilioConversationCall`), after a warm-up call of its own; its
/// figures in `area`.
func measureEmbeddedCalls(turns: Int, area: String = "telephony") async throws -> [BenchmarkResult] {
    var settings = ServerSettings()
    settings.port = 0
    settings.telephony.twilioAuthToken = telephonyBenchmarkAuthToken
    settings.dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-bench-telephony-\(getpid())")
    defer { try? FileManager.default.removeItem(at: settings.dataDirectory) }
    let questions = try ConversationQuestion.script(turns: turns)
    let warmUp = try TelephoneAudio.question(ConversationQuestion(text: "Hello, can you hear me?", voice: "slt"))
    let spoken = try questions.map(TelephoneAudio.question)
    let providers = try await ProviderFactory.make(settings)
    let app = try ParleyApp(settings: settings, secret: BenchmarkServer.defaultSecret, providers: providers, log: .silent)
    do {
        try app.start()
        let warmUpCall = try await TwilioConversationCall(port: app.port)
        try await warmUpCall.listenToTheEnd()
        _ = try await warmUpCall.ask(warmUp)
        warmUpCall.hangUp()
        let call = try await TwilioConversationCall(port: app.port)
        // A greeting, if the agent has one, plays out before the first question.
        try await call.listenToTheEnd()
        var latencies: [Double] = []
        for question in spoken { latencies.append(try await call.ask(question).milliseconds) }
        call.hangUp()
        await app.shutdown()
        let what = "Twilio call voice-to-voice, embedded stack: caller's last voiced sample sent → first agent media received, one call of \(turns) different questions (2 flite voices, each after the previous answer played)"
        return [
            BenchmarkResult(area: area, name: "\(what) (p50)", value: percentile(latencies, 50), unit: "ms", target: "", meetsTarget: nil),
            BenchmarkResult(area: area, name: "\(what) (p90)", value: percentile(latencies, 90), unit: "ms", target: "", meetsTarget: nil),
            BenchmarkResult(area: area, name: "\(what) (max)", value: latencies.max() ?? .nan, unit: "ms", target: "", meetsTarget: nil),
        ]
    } catch {
        await app.shutdown()
        throw error
    }
}

/// Concurrent calls on instant providers (energy VAD, libsoxr), searched by the rule every
/// capacity figure uses (`CapacitySearch`): in a trial every call streams in real time and asks
/// one question, starting within the same second, after one unmeasured warm-up call; it holds
/// when every question is answered and the p99 end of speech → first media is within 1 s (300 ms
/// of it the silence window).
private func measureConcurrentCalls(search: CapacitySearch) async throws -> [BenchmarkResult] {
    var settings = ServerSettings()
    settings.port = 0
    settings.telephony.twilioAuthToken = telephonyBenchmarkAuthToken
    settings.maximumSessions = 10_000
    // Every call here comes from one number, which the server otherwise holds to 10 calls at once
    // (the limit this search found before it was lifted here).
    settings.maximumSessionsPerUser = 10_000
    settings.dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-bench-calls-\(getpid())")
    defer { try? FileManager.default.removeItem(at: settings.dataDirectory) }
    let providers = ProviderSet(
        recognizer: InstantRecognizer(), languageModel: InstantLanguageModel(), synthesizer: InstantSynthesizer(),
        makeVoiceActivityDetector: { EnergyVAD() }, makeResampler: { BenchmarkServer.resampler(from: $0, to: $1) }
    )
    let app = try ParleyApp(settings: settings, secret: BenchmarkServer.defaultSecret, providers: providers, log: .silent)
    try app.start()
    let tone = (0..<4_800).map { Int16(8_000 * sin(2 * Double.pi * 300 * Double($0) / 8_000)) }
    let script = CallScript(leadInMs: 400, speech: tone)
    let port = app.port
    let bracket = await concurrentCallsSearch(search, p99LimitMs: 1_000) { try await placeCall(port: port, script: script, deadline: .seconds(10)) }
    await app.shutdown()
    var results = bracket.runs.enumerated().map { index, run in
        BenchmarkResult(
            area: "telephony",
            name: "Twilio calls, instant providers, trial \(index + 1), \(run.count) concurrent: end of caller speech → first agent media (p99) / calls answered",
            value: run.figures.p99, unit: "ms / \(run.figures.latencies.count) answered (\(run.held ? "held" : "failed"))",
            target: "", meetsTarget: nil)
    }
    if let held = bracket.held?.figures {
        results.append(BenchmarkResult(
            area: "telephony", name: "Twilio calls, instant providers, \(held.calls) concurrent (the largest count held): end of caller speech → first agent media (p50)",
            value: percentile(held.latencies, 50), unit: "ms", target: "", meetsTarget: nil))
    }
    results.append(.capacity(
        area: "telephony",
        name: "Twilio concurrent calls, instant providers, energy VAD, a 300 Hz tone (pipeline overhead, not the defaults; every call answered, p99 ≤ 1000 ms)",
        bracket: bracket, noun: "calls"))
    return results
}

/// Runs `search` with `call` (one call placed, its latency): each trial places one unmeasured
/// warm-up call, then the trial's calls, started within one second; it holds when every call
/// is answered with a p99 of at most `p99LimitMs`.
func concurrentCallsSearch(
    _ search: CapacitySearch, p99LimitMs: Double, call: @escaping @Sendable () async throws -> Duration
) async -> CapacityBracket<ConcurrentCallsTrial> {
    await search.run(
        trial: { calls in
            // The warm-up call is not measured; a trial that follows a failed one is judged on its own calls.
            _ = try? await call()
            let latencies = await withTaskGroup(of: Double?.self) { group in
                for index in 0..<calls {
                    group.addTask {
                        try? await Task.sleep(for: .milliseconds(index * 1_000 / calls))
                        return try? await call().milliseconds
                    }
                }
                return await group.reduce(into: [Double]()) { if let value = $1 { $0.append(value) } }
            }
            log("\(calls) calls: \(latencies.count) answered, p99 \(Int(percentile(latencies, 99))) ms")
            return ConcurrentCallsTrial(calls: calls, latencies: latencies, p99LimitMs: p99LimitMs)
        },
        holds: \.held
    )
}

/// One trial of the concurrent-calls search: each call's end of speech → first media, for those answered.
struct ConcurrentCallsTrial {
    var calls: Int
    var latencies: [Double]
    var p99LimitMs: Double
    var p99: Double { percentile(latencies, 99) }
    var held: Bool { latencies.count == calls && p99 <= p99LimitMs }
}

private func log(_ line: String) {
    FileHandle.standardError.write(Data("telephony: \(line)\n".utf8))
}

private extension String {
    /// The text between the first `start` and the next `end`.
    func between(_ start: String, _ end: String) -> String? {
        guard let from = range(of: start)?.upperBound, let to = self[from...].range(of: end)?.lowerBound else { return nil }
        return String(self[from..<to])
    }
}
