import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyLocal

/// espeak-ng's own voices, the agent's voice in the languages Piper has none for: it lists the
/// languages it speaks, speaks German that Whisper base hears as German, and fails clearly
/// without the program.
@Suite struct EspeakSpeechSynthesizerTests {
    @Test func itListsTheTwoLetterLanguagesOfItsVoices() throws {
        let listing = """
            Pty Language       Age/Gender VoiceName          File                 Other Languages
             5  af              --/M      Afrikaans          gmw/af
             5  cmn             --/M      Chinese_(Mandarin) sit/cmn              (zh-cmn 5)(zh 5)
             5  de              --/M      German             gmw/de
             2  en-us           --/M      English_(America)  gmw/en-US            (en 3)
             5  pt-br           --/M      Portuguese_(Brazil) roa/pt-BR           (pt 6)
            """
        #expect(EspeakSpeechSynthesizer.languages(inVoiceListing: listing) == ["af", "de", "en", "pt"])
        let installed = try EspeakSpeechSynthesizer()
        #expect(installed.languages.map { $0.isSuperset(of: ["de", "fr", "es", "it", "en"]) } == true, "\(installed.languages ?? [])")
    }

    @Test func itSpeaksGermanThatWhisperHearsAsGerman() async throws {
        let espeak = try EspeakSpeechSynthesizer()
        var samples: [Int16] = []
        for try await chunk in espeak.synthesize("Guten Morgen. Der Zug nach Berlin fährt heute Abend um zwanzig Uhr.", options: SpeechOptions(language: "de")) {
            samples += chunk
        }
        #expect(samples.count > espeak.sampleRate, "\(samples.count) samples")
        let resampler = try SoxrResampler(from: espeak.sampleRate, to: 16_000)
        let speech = resampler.process(SampleConversion.float(samples)) + resampler.flush()
        let heard = try await TestModels.baseRecognizer().transcribe(speech, isFinal: true)
        #expect(heard.language == "de" && heard.text.lowercased().contains("berlin"), "\(heard)")
    }

    @Test func textWithoutWordsSaysNothing() async throws {
        var chunks = 0
        for try await _ in try EspeakSpeechSynthesizer().synthesize(" … ", options: SpeechOptions(language: "de")) { chunks += 1 }
        #expect(chunks == 0)
    }

    @Test func aMissingProgramIsNamed() {
        #expect {
            try EspeakSpeechSynthesizer(executable: "/nonexistent/espeak-ng")
        } throws: { error in
            "\(error)".contains("espeak-ng program was not found (/nonexistent/espeak-ng)")
        }
    }
}
