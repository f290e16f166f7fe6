import Foundation
import ParleyCore
import ParleyLocal
import ParleyNet
import ParleyServer
import ParleyTesting
import Testing

/// `semantic_vad` over the realtime endpoint: a server with the Smart Turn model ends a complete
/// spoken question sooner than `server_vad`'s silence window and says why in
/// `parley.turn_judged`; a server without it refuses `semantic_vad`, naming the field.
@Suite struct SemanticVADEndpointTests {
    @Test func aCompleteQuestionEndsTheTurnAtTheJudgedPause() async throws {
        let locator = ModelLocator()
        let vad = try SileroVAD(modelPath: locator.path(of: .sileroVAD))
        let providers = ProviderSet(
            recognizer: FixedSpeechRecognizer(text: "What time is it in Tokyo right now?"), languageModel: KeywordLanguageModel(),
            synthesizer: ScriptedSpeechSynthesizer(millisecondsPerWord: 100),
            makeVoiceActivityDetector: { vad }, makeResampler: ProviderFactory.resampler,
            turnCompletionModel: try SmartTurnModel(modelPath: locator.path(of: .smartTurn))
        )
        let server = try TestServer.start(providers: providers)
        let client = try await RealtimeTestClient.connect(server, query: "?parley_events=true")
        try client.send(#"{"type":"session.update","session":{"type":"realtime","audio":{"input":{"turn_detection":{"type":"semantic_vad","eagerness":"high"}}}}}"#)
        let updated = await client.next("session.updated")
        #expect(updated?["session"]?["audio"]?["input"]?["turn_detection"]?["type"]?.stringValue == "semantic_vad")
        #expect(updated?["session"]?["audio"]?["input"]?["turn_detection"]?["eagerness"]?.stringValue == "high")

        // 300 ms of silence, the question, 1 s of silence: pcm16 at 24 kHz in 100 ms appends.
        let question = try await Self.speech("What time is it in Tokyo right now?")
        let questionEndMs = 300 + question.count / 24
        let audio = [Int16](repeating: 0, count: 7_200) + question + [Int16](repeating: 0, count: 24_000)
        for start in stride(from: 0, to: audio.count, by: 2_400) {
            let chunk = PCM16Buffer(samples: Array(audio[start..<min(start + 2_400, audio.count)])).base64EncodedString()
            try client.send(#"{"type":"input_audio_buffer.append","audio":"\#(chunk)"}"#)
        }

        let judged = await client.next("parley.turn_judged")
        #expect(judged?["ends_turn"] == .bool(true), "\(judged?.jsonText ?? "no verdict")")
        let stopped = try #require(await client.next("input_audio_buffer.speech_stopped"))
        let endMs = Int(try #require(stopped["audio_end_ms"]?.numberValue))
        #expect(endMs > questionEndMs - 300 && endMs - questionEndMs < 300, "the turn ended at \(endMs) ms, the question at \(questionEndMs) ms")
        #expect(judged?["audio_ms"]?.numberValue == Double(endMs))
        #expect(await client.next("input_audio_buffer.committed") != nil)
        let done = await client.next("response.done")
        #expect(done?["response"]?["status"]?.stringValue == "completed", "\(done?.jsonText ?? "no response.done")")
        await server.stop()
    }

    @Test func aServerWithoutTheModelRefusesSemanticVADNamingTheField() async throws {
        let server = try TestServer.start()
        let client = try await RealtimeTestClient.connect(server)
        #expect(await client.next("session.created") != nil)
        try client.send(#"{"type":"session.update","event_id":"evt_1","session":{"type":"realtime","audio":{"input":{"turn_detection":{"type":"semantic_vad","eagerness":"low"}}}}}"#)
        let error = try #require(await client.next("error"))
        #expect(error["error"]?["code"]?.stringValue == "invalid_value")
        #expect(error["error"]?["param"]?.stringValue == "session.turn_detection.type")
        #expect(error["error"]?["event_id"]?.stringValue == "evt_1")
        #expect(error["error"]?["message"]?.stringValue?.contains("semantic_vad") == true)
        // The session is unchanged: it still ends turns on silence.
        try client.send(#"{"type":"session.update","session":{"type":"realtime","instructions":"Be brief."}}"#)
        let updated = await client.next("session.updated")
        #expect(updated?["session"]?["audio"]?["input"]?["turn_detection"]?["type"]?.stringValue == "server_vad")
        await server.stop()
    }

    /// `text` spoken by flite, at 24 kHz as the protocol carries it.
    static func speech(_ text: String) async throws -> [Int16] {
        let synthesizer = try FliteSpeechSynthesizer()
        var speech: [Int16] = []
        for try await chunk in synthesizer.synthesize(text, options: SpeechOptions()) { speech += chunk }
        var resampler = ProviderFactory.resampler(from: synthesizer.sampleRate, to: 24_000)
        return SampleConversion.pcm16(resampler.process(SampleConversion.float(speech)) + resampler.flush())
    }
}
