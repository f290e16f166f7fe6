import Foundation
import ParleyCore
import ParleyLocal
import ParleyNet
import ParleyServer
import ParleyTesting
import Testing

/// Interruptions and noise reduction over the realtime endpoint: the Silero VAD hears flite's
/// voice sent as a client streams it; the words and the agent's reply are scripted.
@Suite struct InterruptionEndpointTests {
    static let reply = Array(repeating: "Here is a long answer that goes on.", count: 3).joined(separator: " ")

    static func server(recognizer: any SpeechRecognizer, suppressesNoise: Bool = true) throws -> TestServer {
        let vad = try SileroVAD(modelPath: ModelLocator().path(of: .sileroVAD))
        let speex: @Sendable (NoiseReduction, Int, Int) -> any NoiseSuppressor = { kind, frameLength, sampleRate in
            SpeexNoiseSuppressor(kind: kind, frameLength: frameLength, sampleRate: sampleRate)
        }
        let makeNoiseSuppressor = suppressesNoise ? speex : nil
        let speexEcho: @Sendable (Int, Int) -> any EchoCanceller = { SpeexEchoCanceller(frameLength: $0, sampleRate: $1) }
        let providers = ProviderSet(
            recognizer: recognizer, languageModel: ScriptedLanguageModel(replies: [.text(reply), .text("Okay.")]),
            synthesizer: ScriptedSpeechSynthesizer(millisecondsPerWord: 200),
            makeVoiceActivityDetector: { vad }, makeResampler: ProviderFactory.resampler,
            makeNoiseSuppressor: makeNoiseSuppressor, makeEchoCanceller: suppressesNoise ? speexEcho : nil
        )
        return try TestServer.start(providers: providers)
    }

    /// Sends pcm16 at 24 kHz in 100 ms appends.
    static func send(_ audio: [Int16], to client: RealtimeTestClient) throws {
        for start in stride(from: 0, to: audio.count, by: 2_400) {
            let chunk = PCM16Buffer(samples: Array(audio[start..<min(start + 2_400, audio.count)])).base64EncodedString()
            try client.send(#"{"type":"input_audio_buffer.append","audio":"\#(chunk)"}"#)
        }
    }

    static func silence(milliseconds: Int) -> [Int16] { [Int16](repeating: 0, count: 24 * milliseconds) }

    @Test func aBackchannelOverTheAgentPausesAndResumesItAndIsNoTurn() async throws {
        let server = try Self.server(recognizer: ScriptedSpeechRecognizer(texts: ["What time is it in Tokyo right now?", "Okay."]))
        let client = try await RealtimeTestClient.connect(server, query: "?parley_events=true")
        let question = try await SemanticVADEndpointTests.speech("What time is it in Tokyo right now?")
        try Self.send(Self.silence(milliseconds: 300) + question + Self.silence(milliseconds: 1_000), to: client)
        #expect(await client.next("response.done")?["response"]?["status"]?.stringValue == "completed")
        // The six-second reply is playing: the listener says "Okay." over it.
        let backchannel = try await SemanticVADEndpointTests.speech("Okay.")
        try Self.send(backchannel + Self.silence(milliseconds: 800), to: client)
        #expect(await client.next("parley.output_audio.paused") != nil)
        let verdict = try #require(await client.next("parley.interruption"))
        #expect(verdict["interrupts"] == .bool(false) && verdict["reason"]?.stringValue == "backchannel", "\(verdict.jsonText)")
        #expect(verdict["words"]?.stringValue == "Okay.")
        #expect(await client.next("parley.output_audio.resumed") != nil)
        // Only the question was a turn.
        try client.send(#"{"type":"session.update","session":{"type":"realtime","instructions":"Be brief."}}"#)
        #expect(await client.next("session.updated") != nil)
        let types = await client.events.compactMap { $0["type"]?.stringValue }
        #expect(types.filter { $0 == "input_audio_buffer.speech_started" }.count == 1)
        #expect(types.filter { $0 == "input_audio_buffer.committed" }.count == 1)
        await server.stop()
    }

    @Test func noiseReductionAndEchoCancellationAreRefusedWhereTheServerHasNone() async throws {
        let server = try Self.server(recognizer: FixedSpeechRecognizer(text: "Hello."))
        let client = try await RealtimeTestClient.connect(server)
        try client.send(#"{"type":"session.update","session":{"type":"realtime","audio":{"input":{"noise_reduction":{"type":"far_field"}}}}}"#)
        let updated = await client.next("session.updated")
        #expect(updated?["session"]?["audio"]?["input"]?["noise_reduction"]?["type"]?.stringValue == "far_field")
        try client.send(#"{"type":"session.update","event_id":"evt_2","session":{"type":"realtime","parley_interruption":{"max_backchannel_ms":-1}}}"#)
        let refused = try #require(await client.next("error"))
        #expect(refused["error"]?["param"]?.stringValue == "session.parley_interruption.max_backchannel_ms")
        try client.send(#"{"type":"session.update","session":{"type":"realtime","parley_echo_cancellation":true}}"#)
        let echoUpdated = await client.next("session.updated")
        #expect(echoUpdated?.jsonText.contains("parley_echo_cancellation") == false)
        await server.stop()

        let plain = try Self.server(recognizer: FixedSpeechRecognizer(text: "Hello."), suppressesNoise: false)
        let other = try await RealtimeTestClient.connect(plain)
        try other.send(#"{"type":"session.update","event_id":"evt_1","session":{"type":"realtime","audio":{"input":{"noise_reduction":{"type":"near_field"}}}}}"#)
        let error = try #require(await other.next("error"))
        #expect(error["error"]?["code"]?.stringValue == "invalid_value")
        #expect(error["error"]?["param"]?.stringValue == "session.audio.input.noise_reduction")
        try other.send(#"{"type":"session.update","session":{"type":"realtime","parley_echo_cancellation":true}}"#)
        let echoError = try #require(await other.next("error"))
        #expect(echoError["error"]?["param"]?.stringValue == "session.parley_echo_cancellation")
        await plain.stop()
    }
}
