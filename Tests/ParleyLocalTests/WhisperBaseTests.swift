import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyLocal

/// Whisper base, the multilingual model setup installs beside tiny.en, on real speech: it
/// hears English, tells German, French and Spanish apart and transcribes each in its own
/// language, and a prompt (or an agent's vocabulary) makes a made-up surname come out as spelled. tiny.en hears English only.
@Suite struct WhisperBaseTests {
    /// One sentence per language, spoken by eSpeak NG, with words a right transcript holds.
    /// French at 140 words a minute: at eSpeak's default pace base often takes its French for Thai.
    static let foreignSentences: [(voice: TestVoice, language: String, text: String, keyWords: [String])] = [
        (.espeak("de"), "de", "Können Sie mir bitte sagen, wann der nächste Zug nach Berlin fährt?", ["berlin", "fährt"]),
        (.espeak("fr", wordsPerMinute: 140), "fr", "Nous avons rendez-vous demain matin avec le médecin à neuf heures.", ["nous", "matin"]),
        (.espeak("es"), "es", "Hace muy buen tiempo hoy, vamos a pasear por el parque esta tarde.", ["tiempo", "parque"]),
    ]

    @Test func baseTranscribesEnglishAndSaysItHeardEnglish() async throws {
        let recognizer = try TestModels.baseRecognizer()
        #expect(recognizer.isMultilingual && recognizer.languages == WhisperLanguages.codes)
        let speech = try await TestVoice.flite("slt").speak("Good morning, I would like to book a table for two people tonight.")
        let heard = try await recognizer.transcribe(speech, isFinal: true)
        #expect(heard.language == "en", "\(heard)")
        let words = normalizedWords(heard.text)
        #expect(words.contains("table") && words.contains("tonight"), "heard \(heard.text)")
    }

    @Test(arguments: foreignSentences.indices)
    func baseDetectsTheLanguageAndTranscribesInIt(index: Int) async throws {
        let sentence = Self.foreignSentences[index]
        let recognizer = try TestModels.baseRecognizer()
        let speech = try await sentence.voice.speak(sentence.text)
        let detected = try await recognizer.transcribe(speech, isFinal: true)
        #expect(detected.language == sentence.language, "\(sentence.voice) heard as \(detected.language ?? "?"): \(detected.text)")
        let lowered = detected.text.lowercased()
        #expect(sentence.keyWords.allSatisfy { lowered.contains($0) }, "heard \(detected.text)")
        // Told the language, it transcribes in it and says so.
        let told = try await recognizer.transcribe(speech, isFinal: true, hints: TranscriptionHints(language: sentence.language))
        #expect(told.language == sentence.language)
        #expect(sentence.keyWords.allSatisfy { told.text.lowercased().contains($0) }, "heard \(told.text)")
    }

    @Test func aPromptMakesAMadeUpSurnameComeOutRight() async throws {
        let recognizer = try TestModels.baseRecognizer()
        let speech = try await TestVoice.flite("slt").speak("Please send the invoice to Mister Quaxtonby before Friday.")
        let unprompted = try await recognizer.transcribe(speech, isFinal: true)
        #expect(!unprompted.text.lowercased().contains("quaxtonby"), "heard \(unprompted.text) without a prompt")
        let prompted = try await recognizer.transcribe(speech, isFinal: true, hints: TranscriptionHints(prompt: "Mister Quaxtonby"))
        #expect(prompted.text.lowercased().contains("quaxtonby"), "heard \(prompted.text) with the prompt")
        #expect(normalizedWords(prompted.text).contains("friday"), "heard \(prompted.text)")
    }

    /// An agent's vocabulary does what the client's prompt does, after a prompt that says
    /// nothing of the name.
    @Test func anAgentsVocabularyMakesTheSameSurnameComeOutRight() async throws {
        let recognizer = try TestModels.baseRecognizer()
        let speech = try await TestVoice.flite("slt").speak("Please send the invoice to Mister Quaxtonby before Friday.")
        var configuration = VoiceSessionConfiguration()
        configuration.transcription = TranscriptionHints(language: "en", prompt: "Invoices and orders.")
        let withoutVocabulary = try await recognizer.transcribe(speech, isFinal: true, hints: configuration.recognizerHints)
        #expect(!withoutVocabulary.text.lowercased().contains("quaxtonby"), "heard \(withoutVocabulary.text) without the vocabulary")
        configuration.vocabulary = ["Parley", "Quaxtonby"]
        let withVocabulary = try await recognizer.transcribe(speech, isFinal: true, hints: configuration.recognizerHints)
        #expect(withVocabulary.text.lowercased().contains("quaxtonby"), "heard \(withVocabulary.text) with the vocabulary")
    }

    @Test func tinyEnglishHearsEnglishOnlyAndRefusesOtherLanguages() async throws {
        let recognizer = try TestModels.recognizer()
        #expect(!recognizer.isMultilingual && recognizer.languages == ["en"])
        let speech = try await TestModels.speech("Turn on the lights.")
        #expect(try await recognizer.transcribe(speech, isFinal: true).language == "en")
        await #expect(throws: ProviderError.self) {
            try await recognizer.transcribe(speech, isFinal: true, hints: TranscriptionHints(language: "de"))
        }
        let base = try TestModels.baseRecognizer()
        await #expect(throws: ProviderError.self) {
            try await base.transcribe(speech, isFinal: true, hints: TranscriptionHints(language: "xx"))
        }
    }

    @Test func whisperKnowsItsLanguagesByTwoLetterCode() {
        let codes = WhisperLanguages.codes
        #expect(["en", "de", "fr", "es", "ja", "sw"].allSatisfy(codes.contains))
        #expect(!codes.contains("haw") && !codes.contains("english") && codes.allSatisfy { $0.count == 2 })
        #expect(codes.count > 90)
    }
}
