import BenchmarkHarness
import Foundation
import ParleyCore
import ParleyLocal
import ParleyTesting

/// The ear in several languages (issue 40): word error rate of Whisper tiny.en and base on
/// English from two voices, and of base on German, French and Spanish from eSpeak NG's voices,
/// left to detect the language (and how often it detected it right) and told it; and the time
/// each model takes per utterance.
func runLanguageBenchmarks(quick: Bool) async throws -> [BenchmarkResult] {
    let locator = ModelLocator()
    let tiny = try WhisperSpeechRecognizer(modelPath: locator.path(of: .whisperTinyEnglish))
    let base = try WhisperSpeechRecognizer(modelPath: locator.path(of: .whisperBase))
    let count = quick ? 3 : Int.max
    var results: [BenchmarkResult] = []
    var seconds: [String: [Double]] = ["tiny.en": [], "base": []]

    for voice in [TestVoice.flite("slt"), .espeak("en-us")] {
        let sentences = Array(EverydaySentences.all.prefix(count))
        let clips = try await speak(sentences, with: voice)
        for (name, recognizer) in [("tiny.en", tiny), ("base", base)] {
            let heard = try await transcribe(clips, with: recognizer, hints: TranscriptionHints())
            seconds[name, default: []] += heard.map(\.processingDuration)
            results.append(errorRate(of: name, voice: voice, language: "English", sentences: sentences, heard: heard, told: false))
        }
    }
    let foreign: [(language: String, code: String, voice: TestVoice)] = [
        ("German", "de", .espeak("de")), ("French", "fr", .espeak("fr", wordsPerMinute: 140)), ("Spanish", "es", .espeak("es")),
    ]
    for (language, code, voice) in foreign {
        let sentences = Array((LanguageSentences.byCode[code] ?? []).prefix(count))
        let clips = try await speak(sentences, with: voice)
        let detected = try await transcribe(clips, with: base, hints: TranscriptionHints())
        results.append(errorRate(of: "base", voice: voice, language: language, sentences: sentences, heard: detected, told: false))
        let right = detected.filter { $0.language == code }.count
        results.append(BenchmarkResult(
            area: "languages", name: "Whisper base detected \(language) in \(voice) speech (\(sentences.count) sentences)",
            value: Double(right) / Double(sentences.count) * 100, unit: "%", target: "", meetsTarget: nil
        ))
        let told = try await transcribe(clips, with: base, hints: TranscriptionHints(language: code))
        results.append(errorRate(of: "base", voice: voice, language: language, sentences: sentences, heard: told, told: true))
    }
    for name in ["tiny.en", "base"] {
        let times = (seconds[name] ?? []).map { $0 * 1_000 }
        for p in [50.0, 90.0] {
            results.append(BenchmarkResult(
                area: "languages", name: "Whisper \(name) time to transcribe an English sentence (\(times.count) utterances, p\(Int(p)))",
                value: percentile(times, p), unit: "ms", target: "", meetsTarget: nil
            ))
        }
    }
    return results
}

/// Everyday sentences in German, French and Spanish, without numbers (a recognizer writes
/// digits or words for them at will).
enum LanguageSentences {
    static let byCode: [String: [String]] = [
        "de": [
            "Guten Morgen, wie geht es Ihnen heute?",
            "Können Sie mir bitte sagen, wann der nächste Zug nach Berlin fährt?",
            "Das Wetter ist heute sehr schön.",
            "Ich möchte gerne einen Tisch für heute Abend reservieren.",
            "Wo ist die nächste Apotheke?",
            "Bitte schalten Sie das Licht in der Küche aus.",
            "Meine Schwester wohnt seit vielen Jahren in Hamburg.",
            "Haben Sie noch ein freies Zimmer für diese Nacht?",
        ],
        "fr": [
            "Bonjour, comment allez-vous aujourd'hui?",
            "Nous avons rendez-vous demain matin avec le médecin.",
            "Il fait très beau aujourd'hui.",
            "Je voudrais réserver une table pour ce soir.",
            "Où se trouve la pharmacie la plus proche?",
            "Pouvez-vous éteindre la lumière de la cuisine, s'il vous plaît?",
            "Ma sœur habite à Lyon depuis longtemps.",
            "Avez-vous encore une chambre libre pour cette nuit?",
        ],
        "es": [
            "Buenos días, ¿cómo está usted hoy?",
            "Hace muy buen tiempo hoy, vamos a pasear por el parque esta tarde.",
            "Quisiera reservar una mesa para esta noche.",
            "¿Dónde está la farmacia más cercana?",
            "Por favor, apague la luz de la cocina.",
            "Mi hermana vive en Sevilla desde hace muchos años.",
            "¿Tiene todavía una habitación libre para esta noche?",
            "El tren sale mañana por la mañana.",
        ],
    ]
}

/// Each sentence as `voice` says it, at 16 kHz.
private func speak(_ sentences: [String], with voice: TestVoice) async throws -> [[Float]] {
    var clips: [[Float]] = []
    for sentence in sentences { clips.append(try await voice.speak(sentence)) }
    return clips
}

private func transcribe(_ clips: [[Float]], with recognizer: WhisperSpeechRecognizer, hints: TranscriptionHints) async throws -> [Transcription] {
    var heard: [Transcription] = []
    for clip in clips { heard.append(try await recognizer.transcribe(clip, isFinal: true, hints: hints)) }
    return heard
}

/// The word error rate of `heard` against `sentences`, as a figure.
private func errorRate(
    of model: String, voice: TestVoice, language: String, sentences: [String], heard: [Transcription], told: Bool
) -> BenchmarkResult {
    let pairs = zip(sentences, heard).map { (reference: $0, hypothesis: $1.text) }
    let (errors, words) = totalWordErrors(pairs)
    log("\(model), \(voice), \(language)\(told ? " (told)" : ""): \(pairs.map { "\($0.reference) → \($0.hypothesis)" }.joined(separator: " | "))")
    let how = language == "English" ? "" : told ? ", told the language" : ", left to detect it"
    return BenchmarkResult(
        area: "languages", name: "Whisper \(model) WER, \(voice) \(language)\(how) (\(words) words)",
        value: Double(errors) / Double(max(words, 1)) * 100, unit: "%", target: "", meetsTarget: nil
    )
}

private func log(_ line: String) {
    FileHandle.standardError.write(Data("languages: \(line)\n".utf8))
}
