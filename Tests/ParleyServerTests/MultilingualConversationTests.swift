import Foundation
import ParleyCore
import ParleyLocal
import ParleyNet
import ParleyOpenAI
import ParleyServer
import ParleyTesting
import Testing

/// A caller speaking German through a realtime session on the embedded ear and voice: Whisper
/// base hears German, the model upstream (a scripted OpenAI-compatible server) is told to
/// answer in German, and the answer is spoken by espeak-ng's German voice — which Whisper base
/// then hears as German. `GET /v1/status` lists the languages each engine hears or speaks.
@Suite struct MultilingualConversationTests {
    /// An answer Whisper base hears right in espeak-ng's German voice (it takes some German
    /// sentences of that robotic voice for Hebrew or Thai).
    static let germanAnswer = "Guten Morgen. Der Zug nach Berlin fährt heute Abend um zwanzig Uhr."

    /// A server hearing with Whisper base, thinking upstream at `upstream`, speaking with the
    /// embedded voice in every language it has.
    static func server(upstream: FakeOpenAIServer) throws -> (TestServer, WhisperSpeechRecognizer) {
        let whisper = try WhisperSpeechRecognizer(modelPath: ModelLocator().path(of: WhisperModel.base.file))
        let voice = try ProviderFactory.voice(ServerSettings())
        var providers = TestServer.testProviders()
        providers.recognizer = whisper
        providers.languageModel = OpenAILanguageModel(configuration: OpenAIConfiguration(baseURL: upstream.baseURL, model: "scripted"))
        providers.synthesizer = voice.synthesizer
        providers.makeResampler = ProviderFactory.resampler(from:to:)
        providers.components = voice.components
        return (try TestServer.start(providers: providers), whisper)
    }

    @Test func aGermanTurnIsAnsweredInGermanAndSpokenByAGermanVoice() async throws {
        let upstream = try FakeOpenAIServer()
        // Answers in German only when the instructions ask for it.
        upstream.setChatResponder { request in
            let system = Self.items(of: request["messages"]).first?["content"]?.stringValue ?? ""
            return .text([system.contains("The caller speaks German; answer in German.") ? Self.germanAnswer : "Sorry, I only speak English."])
        }
        let (server, whisper) = try Self.server(upstream: upstream)
        let client = try await RealtimeTestClient.connect(server)
        #expect(await client.next("session.created") != nil)
        try client.send(#"{"type":"session.update","session":{"type":"realtime","audio":{"input":{"turn_detection":null}}}}"#)
        #expect(await client.next("session.updated") != nil)

        try TranscriptionLanguageTests.say(try await TestVoice.espeak("de").speak("Können Sie mir bitte sagen, wann der nächste Zug nach Berlin fährt?"), to: client)
        let heard = await client.next("conversation.item.input_audio_transcription.completed", seconds: 60)
        #expect(heard?["transcript"]?.stringValue?.lowercased().contains("berlin") == true, "\(heard?.jsonText ?? "no transcript")")
        try client.send(#"{"type":"response.create"}"#)
        let done = await client.next("response.done", seconds: 60)
        #expect(done?["response"]?["status"]?.stringValue == "completed", "\(done?.jsonText ?? "no response.done")")

        // The model was asked to answer in German.
        let chats = upstream.requests.filter { $0.path.hasSuffix("/chat/completions") }
        let system = Self.items(of: chats.last?.json?["messages"]).first?["content"]?.stringValue ?? ""
        #expect(system.hasSuffix("The caller speaks German; answer in German."), "\(system)")

        // What the caller heard is German: Whisper base, left to detect, hears it so.
        var audio: [Int16] = []
        for event in await client.events where event["type"]?.stringValue == "response.output_audio.delta" {
            audio += try #require(event["delta"]?.stringValue.flatMap { try? PCM16Buffer(base64: $0) }).samples
        }
        #expect(audio.count > 24_000, "\(audio.count) samples of answer")
        var resampler = ProviderFactory.resampler(from: 24_000, to: 16_000)
        let spoken = try await whisper.transcribe(
            resampler.process(SampleConversion.float(audio)) + resampler.flush(), isFinal: true, hints: TranscriptionHints()
        )
        #expect(spoken.language == "de", "heard \(spoken.language ?? "no language"): \(spoken.text)")
        #expect(spoken.text.lowercased().contains("berlin"), "\(spoken.text)")
        client.socket.close()
        await server.stop()
    }

    @Test func theStatusListsTheLanguagesEachEngineSpeaks() async throws {
        let upstream = try FakeOpenAIServer()
        let (server, _) = try Self.server(upstream: upstream)
        let (status, body, _) = try await server.request("GET", "/v1/status", token: .some(nil))
        await server.stop()
        #expect(status == 200)
        let engines = Self.items(of: body["providers"])
        let piper = engines.first { $0["name"]?.stringValue == "Piper en_US-joe-medium" }
        let espeak = engines.first { $0["name"]?.stringValue == "espeak-ng" }
        #expect(piper?["languages"] == ["en"], "\(body.jsonText)")
        let spoken = Set(Self.items(of: espeak?["languages"]).compactMap(\.stringValue))
        #expect(spoken.isSuperset(of: ["de", "fr", "es", "it", "en"]), "\(spoken)")
    }

    /// The items of a JSON array, or none.
    static func items(of value: JSONValue?) -> [JSONValue] {
        if case .array(let items)? = value { return items }
        return []
    }
}
