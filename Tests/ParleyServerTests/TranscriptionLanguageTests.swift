import Foundation
import ParleyCore
import ParleyLocal
import ParleyNet
import ParleyServer
import ParleyTesting
import Testing

/// `input_audio_transcription.language` and `.prompt` through a realtime session on real
/// Whisper: a language the recognizer cannot hear, or no ISO-639-1 code at all, is refused by
/// name; with base, German speech is heard as German (reported in `parley.input_transcript.language`)
/// and a prompt spells a surname right.
@Suite struct TranscriptionLanguageTests {
    /// The test providers with a real Whisper recognizer.
    static func server(_ model: WhisperModel) throws -> TestServer {
        var providers = TestServer.testProviders()
        providers.recognizer = try WhisperSpeechRecognizer(modelPath: ModelLocator().path(of: model.file))
        return try TestServer.start(providers: providers)
    }

    @Test(arguments: [
        (WhisperModel.tinyEnglish, false, #"{"type":"session.update","session":{"type":"realtime","audio":{"input":{"transcription":{"model":"whisper-1","language":"de"}}}}}"#,
         "session.audio.input.transcription.language", "hears only English"),
        (.tinyEnglish, true, #"{"type":"session.update","session":{"input_audio_transcription":{"model":"whisper-1","language":"fr"}}}"#,
         "session.input_audio_transcription.language", "hears only English"),
        (.base, false, #"{"type":"session.update","session":{"type":"realtime","audio":{"input":{"transcription":{"language":"german"}}}}}"#,
         "session.audio.input.transcription.language", "not an ISO-639-1 language code"),
        (.base, true, #"{"type":"session.update","session":{"input_audio_transcription":{"language":"xx"}}}"#,
         "session.input_audio_transcription.language", "not an ISO-639-1 language code"),
    ])
    func aLanguageTheRecognizerCannotHearIsRefusedByName(model: WhisperModel, beta: Bool, update: String, param: String, message: String) async throws {
        let server = try Self.server(model)
        let client = try await RealtimeTestClient.connect(server, beta: beta)
        #expect(await client.next("session.created") != nil)
        try client.send(update)
        let error = await client.next("error")
        #expect(error?["error"]?["code"]?.stringValue == "invalid_value", "\(error?.jsonText ?? "no error")")
        #expect(error?["error"]?["param"]?.stringValue == param, "\(error?.jsonText ?? "no error")")
        #expect(error?["error"]?["message"]?.stringValue?.contains(message) == true, "\(error?.jsonText ?? "no error")")
        // English is always fine, and the session goes on.
        try client.send(update.replacingOccurrences(of: #""language":"[a-z]+""#, with: #""language":"en""#, options: .regularExpression))
        #expect(await client.next("session.updated") != nil)
        client.socket.close()
        await server.stop()
    }

    @Test func baseHearsGermanAsGermanAndAPromptSpellsAName() async throws {
        let server = try Self.server(.base)
        let client = try await RealtimeTestClient.connect(server, query: "?parley_events=true")
        #expect(await client.next("session.created") != nil)
        try client.send(#"{"type":"session.update","session":{"type":"realtime","audio":{"input":{"turn_detection":null}}}}"#)
        #expect(await client.next("session.updated") != nil)

        try Self.say(try await TestVoice.espeak("de").speak("Können Sie mir bitte sagen, wann der nächste Zug nach Berlin fährt?"), to: client)
        let german = await client.next("conversation.item.input_audio_transcription.completed", seconds: 60)
        #expect(german?["transcript"]?.stringValue?.lowercased().contains("berlin") == true, "\(german?.jsonText ?? "no transcript")")
        let language = await client.next("parley.input_transcript.language")
        #expect(language?["language"]?.stringValue == "de" && language?["item_id"] == german?["item_id"], "\(language?.jsonText ?? "no language")")

        try client.send(#"{"type":"session.update","session":{"type":"realtime","audio":{"input":{"transcription":{"model":"whisper-1","language":"en","prompt":"Mister Quaxtonby"}}}}}"#)
        #expect(await client.next("session.updated") != nil)
        try Self.say(try await TestVoice.flite("slt").speak("Please send the invoice to Mister Quaxtonby before Friday."), to: client)
        let named = await client.next("conversation.item.input_audio_transcription.completed", seconds: 60)
        #expect(named?["transcript"]?.stringValue?.lowercased().contains("quaxtonby") == true, "\(named?.jsonText ?? "no transcript")")
        client.socket.close()
        await server.stop()
    }

    /// Sends 16 kHz speech as 24 kHz pcm16 chunks and commits it.
    static func say(_ speech: [Float], to client: RealtimeTestClient) throws {
        var resampler = ProviderFactory.resampler(from: 16_000, to: 24_000)
        let audio = SampleConversion.pcm16(resampler.process(speech) + resampler.flush())
        for start in stride(from: 0, to: audio.count, by: 4_800) {
            let chunk = PCM16Buffer(samples: Array(audio[start..<min(start + 4_800, audio.count)])).base64EncodedString()
            try client.send(#"{"type":"input_audio_buffer.append","audio":"\#(chunk)"}"#)
        }
        try client.send(#"{"type":"input_audio_buffer.commit"}"#)
    }
}
