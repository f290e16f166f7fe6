import Foundation
import ParleyCore
import ParleyLocal
import ParleyNet
import ParleyServer
import Testing

/// The whole spine with the embedded offline stack: speech synthesised by flite goes in over
/// the realtime socket, whisper.cpp transcribes it, SmolLM2 answers, the Piper voice speaks the answer.
@Suite(.serialized) struct EmbeddedEndToEndTests {
    @Test func aSpokenQuestionGetsASpokenAnswer() async throws {
        var settings = ServerSettings()
        settings.port = 0
        settings.dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-e2e-\(UUID().uuidString)")
        let providers = try await ProviderFactory.make(settings)
        let server = try TestServer.start(providers: providers)

        // "What is the capital of France?" spoken by flite, at 24 kHz as the protocol carries it.
        let synthesizer = try FliteSpeechSynthesizer()
        var speech: [Int16] = []
        for try await chunk in synthesizer.synthesize("What is the capital of France?", options: SpeechOptions()) { speech += chunk }
        var resampler = ProviderFactory.resampler(from: synthesizer.sampleRate, to: 24_000)
        let audio = SampleConversion.pcm16(resampler.process(SampleConversion.float(speech)) + resampler.flush())

        let client = try await RealtimeTestClient.connect(server)
        try client.send(#"{"type":"session.update","session":{"type":"realtime","audio":{"input":{"turn_detection":null}}}}"#)
        #expect(await client.next("session.updated") != nil)
        for start in stride(from: 0, to: audio.count, by: 4_800) {
            let chunk = PCM16Buffer(samples: Array(audio[start..<min(start + 4_800, audio.count)])).base64EncodedString()
            try client.send(#"{"type":"input_audio_buffer.append","audio":"\#(chunk)"}"#)
        }
        try client.send(#"{"type":"input_audio_buffer.commit"}"#)
        try client.send(#"{"type":"response.create"}"#)

        let transcript = await client.next("conversation.item.input_audio_transcription.completed", seconds: 60)
        let heard = transcript?["transcript"]?.stringValue?.lowercased() ?? ""
        #expect(heard.contains("capital") && heard.contains("france"), "heard: \(heard)")
        let done = await client.next("response.done", seconds: 120)
        #expect(done?["response"]?["status"]?.stringValue == "completed", "\(done?.jsonText ?? "no response.done")")
        let events = await client.events
        #expect(events.contains { $0["type"]?.stringValue == "response.output_audio.delta" })
        let answer = events.last { $0["type"]?.stringValue == "response.output_audio_transcript.done" }?["transcript"]?.stringValue ?? ""
        #expect(!answer.isEmpty)
        await server.stop()
    }
}
