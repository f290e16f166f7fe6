import BenchmarkHarness
import Foundation
import ParleyCore
import ParleyNet
import ParleyServer
import ParleySIP

/// SIP calls (issue 39): mouth-to-ear on loopback over the SIP door with the default embedded
/// stack — a caller (Parley's own SIP user agent, another endpoint in the process) speaks a flite
/// question as G.711 RTP paced 20 ms, and the time runs from the RTP packet carrying its last
/// voiced sample to the first voiced RTP packet back — beside the Twilio door's voice-to-voice
/// figure for the same question, measured in the same run; then how many SIP calls one server
/// holds with the defaults (`PhoneCapacityBenchmarks`).
func runSIPBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    let turns = quick ? 3 : 10
    var results = try await measureEmbeddedSIPCalls(turns: turns)
    results += try await measureEmbeddedCalls(turns: turns, area: "sip")
    results += try await PhoneCapacityBenchmarks.measure(door: .sip, area: "sip", quick: quick)
    return results
}

/// Calls on the embedded stack (Silero VAD, whisper.cpp, SmolLM2, flite), each a fresh conversation.
private func measureEmbeddedSIPCalls(turns: Int) async throws -> [BenchmarkResult] {
    var settings = ServerSettings()
    settings.port = 0
    settings.sip.port = 0
    settings.sip.trunks = [try IPAddressRange("127.0.0.1")]
    settings.dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-bench-sip-\(getpid())")
    defer { try? FileManager.default.removeItem(at: settings.dataDirectory) }
    let providers = try await ProviderFactory.make(settings)
    let app = try ParleyApp(settings: settings, secret: BenchmarkServer.defaultSecret, providers: providers, log: .silent)
    var callerSettings = SIPEndpoint.Settings()
    callerSettings.port = 0
    callerSettings.rtpPorts = 30_000...40_000
    let caller = try SIPEndpoint(settings: callerSettings) { _ in }
    do {
        try app.start()
        guard let port = app.sipPort else { throw EmbeddedBenchmarkFailure("the SIP door did not open") }
        var speech: [Int16] = []
        for try await chunk in providers.synthesizer.synthesize("What is the weather like in Paris today?", options: SpeechOptions()) { speech += chunk }
        let narrow = try TelephoneAudio.narrowband(SampleConversion.float(speech), rate: providers.synthesizer.sampleRate)
        let last = EndOfSpeech.lastVoicedSample(in: narrow) ?? narrow.count - 1
        let question = [Int16](repeating: 0, count: 400 * 8) + narrow[...last]
        var voiced: [Double] = []
        var sounded: [Double] = []
        for turn in 1...turns {
            let heard = try await mouthToEar(caller: caller, target: "sip:+14155550123@127.0.0.1:\(port)", question: question)
            voiced.append(heard.voiced.milliseconds)
            sounded.append(heard.anySound.milliseconds)
            FileHandle.standardError.write(Data("sip: call \(turn): first sound \(Int(sounded.last!)) ms, first voiced \(Int(voiced.last!)) ms\n".utf8))
        }
        caller.close()
        await app.shutdown()
        let name = "SIP call mouth-to-ear, embedded stack, PCMU on loopback: caller's last voiced RTP → "
        return [
            BenchmarkResult(area: "sip", name: name + "first voiced RTP back (\(EndOfSpeech.voicedLevelLabel)) (p50)",
                            value: percentile(voiced, 50), unit: "ms", target: "", meetsTarget: nil),
            BenchmarkResult(area: "sip", name: name + "first voiced RTP back (\(EndOfSpeech.voicedLevelLabel)) (p90)",
                            value: percentile(voiced, 90), unit: "ms", target: "", meetsTarget: nil),
            BenchmarkResult(area: "sip", name: name + "first RTP of the answer, any sound (as Twilio's first media) (p50)",
                            value: percentile(sounded, 50), unit: "ms", target: "", meetsTarget: nil),
        ]
    } catch {
        caller.close()
        await app.shutdown()
        throw error
    }
}

/// Places one call, speaks `question` (8 kHz, ending on its last voiced sample) into it, and
/// returns the times from the packet carrying that sample going out to the first packet back
/// with any sound (the agent's silence is digital zero) and to the first voiced one.
func mouthToEar(
    caller: SIPEndpoint, target: String, question: [Int16], deadline: Duration = .seconds(30)
) async throws -> (anySound: Duration, voiced: Duration) {
    let call = try caller.dial(SIPDial(target: target, caller: "+14155550100", ringTimeout: .seconds(10), codecs: [.pcmu]))
    defer { call.hangUp() }
    for await progress in call.dialProgress {
        if case .failed(let failure) = progress { throw EmbeddedBenchmarkFailure("the call failed: \(failure)") }
    }
    guard call.codec == .pcmu else { throw EmbeddedBenchmarkFailure("the call was answered in \(call.codec.rawValue), not PCMU") }
    // The call says when the packet carrying the question's last sample went out (`outputStopped`).
    call.enqueueAudio(question, responseID: "question", itemID: "question")
    call.flushAudio(responseID: "question", itemID: "question")
    let clock = ContinuousClock()
    let timeout = Task {
        try await Task.sleep(for: deadline)
        call.hangUp()
    }
    defer { timeout.cancel() }
    var spokenAt: ContinuousClock.Instant?
    var soundAt: ContinuousClock.Instant?
    for await event in call.events {
        switch event {
        case .outputStopped(responseID: "question"):
            spokenAt = clock.now
        case .audio(let samples) where spokenAt != nil:
            if soundAt == nil, samples.contains(where: { $0 != 0 }) { soundAt = clock.now }
            if let spokenAt, let soundAt, samples.contains(where: { abs(Int32($0)) > Int32(EndOfSpeech.voicedLevel16) }) {
                return (soundAt - spokenAt, clock.now - spokenAt)
            }
        case .ended(let reason):
            throw EmbeddedBenchmarkFailure("the call ended before an answer was heard: \(reason)")
        default:
            break
        }
    }
    throw EmbeddedBenchmarkFailure("the call ended before an answer was heard")
}
