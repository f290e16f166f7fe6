import Foundation
import ParleyTesting
import Testing
@testable import ParleyCore

/// The caller's language: a caller heard in another language than English is answered in it
/// (the model is told, once per change of language) and spoken to in it; the agent's
/// vocabulary reaches the recognizer's prompt.
@Suite struct CallerLanguageTests {
    @Test(arguments: [
        ("de", "The caller speaks German; answer in German."),
        ("fr", "The caller speaks French; answer in French."),
        ("es", "The caller speaks Spanish; answer in Spanish."),
    ])
    func anotherLanguageAddsOneLineToTheInstructions(language: String, note: String) {
        #expect(CallerLanguage.note(for: language) == note)
        #expect(CallerLanguage.instructions("Be brief.", answeringIn: language) == "Be brief.\n\n" + note)
        #expect(CallerLanguage.instructions("", answeringIn: language) == note)
    }

    @Test(arguments: [nil, "en"] as [String?])
    func englishOrAnUnknownLanguageAddsNothing(language: String?) {
        #expect(CallerLanguage.note(for: language) == nil)
        #expect(CallerLanguage.instructions("Be brief.", answeringIn: language) == "Be brief.")
    }

    @Test func theLanguageHeardComesBeforeTheConfiguredOne() {
        var language = CallerLanguage()
        #expect(language.current(configured: nil) == nil)
        #expect(language.current(configured: "fr") == "fr")
        language.heard("DE")
        language.heard(nil)
        #expect(language.current(configured: "fr") == "de")
    }

    @Test func anotherLanguageTakesOverOnlyAfterTwoTurnsInARow() {
        var language = CallerLanguage()
        language.heard("de")
        language.heard("en")  // one "okay" heard as English
        #expect(language.spoken == "de")
        language.heard("de")
        language.heard("en")
        language.heard("fr")  // two other languages, one turn each
        #expect(language.spoken == "de")
        #expect(language.hearing("fr").spoken == "fr" && language.spoken == "de")
        language.heard("fr")
        #expect(language.spoken == "fr")
    }

    /// 300 ms of quiet, 800 ms of speech, 700 ms of quiet: one server-VAD turn.
    private static func speakOneTurn(into session: VoiceSession) async throws {
        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 300), sampleRate: 16_000)
        try await session.appendAudio(ScenarioAudio.speech(milliseconds: 800), sampleRate: 16_000)
        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 700), sampleRate: 16_000)
    }

    @Test func aTurnHeardInGermanIsAnsweredAndSpokenInGerman() async throws {
        let model = ScriptedLanguageModel(replies: [.text("Es ist Mittag.")])
        let synthesizer = ScriptedSpeechSynthesizer()
        let (session, recorder) = makeSession(
            recognizer: ScriptedSpeechRecognizer(results: [.success("Wie spät ist es?")], language: "de"), model: model, synthesizer: synthesizer,
            configuration: VoiceSessionConfiguration(instructions: "Be brief.")
        )
        try await Self.speakOneTurn(into: session)
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        #expect(model.requests.first?.messages.first == .system("Be brief.\n\nThe caller speaks German; answer in German."))
        #expect(!synthesizer.options.isEmpty && synthesizer.options.allSatisfy { $0.language == "de" }, "\(synthesizer.options)")
        await session.close()
    }

    @Test func anEnglishTurnChangesNothing() async throws {
        let model = ScriptedLanguageModel(replies: [.text("It is noon.")])
        let synthesizer = ScriptedSpeechSynthesizer()
        let (session, recorder) = makeSession(
            recognizer: ScriptedSpeechRecognizer(results: [.success("What time is it?")], language: "en"), model: model, synthesizer: synthesizer,
            configuration: VoiceSessionConfiguration(instructions: "Be brief.")
        )
        try await Self.speakOneTurn(into: session)
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        #expect(model.requests.first?.messages.first == .system("Be brief."))
        #expect(synthesizer.options.allSatisfy { $0.language == "en" })
        await session.close()
    }

    @Test func theConfiguredLanguageAnswersBeforeTheCallerIsHeard() async throws {
        let model = ScriptedLanguageModel(replies: [.text("Bonjour !")])
        var configuration = VoiceSessionConfiguration(instructions: "Greet the caller.")
        configuration.transcription = TranscriptionHints(language: "fr")
        let (session, recorder) = makeSession(model: model, configuration: configuration)
        await session.createResponse()
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        #expect(model.requests.first?.messages.first == .system("Greet the caller.\n\nThe caller speaks French; answer in French."))
        await session.close()
    }

    /// Speech over the agent of a German caller is heard as German, without the prompt of
    /// English backchannels (which would pull its words into English).
    @Test func speechOverTheAgentOfAGermanCallerIsHeardAsGerman() async throws {
        let recognizer = ScriptedSpeechRecognizer(results: [.success("Wie spät ist es?"), .success("Genau.")], language: "de")
        let (session, recorder) = makeSession(
            recognizer: recognizer, model: ScriptedLanguageModel(replies: [.text("Eins zwei drei vier fünf sechs sieben acht neun zehn.")])
        )
        try await ScenarioAudio.ask(session, pauseMs: 700)
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        try await session.appendAudio(ScenarioAudio.speech(milliseconds: 500), sampleRate: 16_000)
        try await session.appendAudio(ScenarioAudio.silence(milliseconds: 600), sampleRate: 16_000)
        #expect(await recorder.waitFor { if case .interruptionDecided = $0 { true } else { false } })
        // The turn's own passes leave the language to the recognizer; the speech over the agent is told it.
        let hints = recognizer.hints
        #expect(hints.contains { $0.language == "de" }, "\(hints)")
        #expect(!hints.contains { $0.prompt == InterruptionPolicy.recognitionPrompt }, "\(hints)")
        await session.close()
    }

    @Test(arguments: [
        (nil, "Quaxtonby, Parley."),
        ("Invoices and orders.", "Invoices and orders. Quaxtonby, Parley."),
        ("  ", "Quaxtonby, Parley."),
    ] as [(String?, String)])
    func theVocabularyFollowsTheClientsPrompt(prompt: String?, expected: String) async throws {
        let recognizer = ScriptedSpeechRecognizer(results: [.success("Send it to Mister Quaxtonby.")])
        var configuration = VoiceSessionConfiguration()
        configuration.transcription = TranscriptionHints(language: "en", prompt: prompt)
        configuration.vocabulary = ["Quaxtonby", "Parley"]
        #expect(configuration.recognizerHints == TranscriptionHints(language: "en", prompt: expected))
        let (session, recorder) = makeSession(
            recognizer: recognizer, model: ScriptedLanguageModel(replies: [.text("Done.")]), configuration: configuration
        )
        try await Self.speakOneTurn(into: session)
        #expect(await recorder.waitFor(Match.responseDone(.completed)))
        #expect(!recognizer.hints.isEmpty && recognizer.hints.allSatisfy { $0.prompt == expected }, "\(recognizer.hints)")
        await session.close()
    }

    @Test func withoutVocabularyTheClientsHintsGoAsTheyAre() {
        var configuration = VoiceSessionConfiguration()
        configuration.transcription = TranscriptionHints(language: "de", prompt: "Zug nach Berlin.")
        #expect(configuration.recognizerHints == configuration.transcription)
    }
}
