import Foundation

/// The language the caller speaks — the one the recognizer last heard, else the one the session
/// was told — and what the agent is told about it.
///
/// A caller who is not speaking English gets answers in their language: the agent's
/// instructions gain one line naming it ("The caller speaks German; answer in German."), which
/// changes only when the language does, so a model server's cached prompt is rebuilt once per
/// change. The voice follows it through `SpeechOptions.language`.
struct CallerLanguage: Sendable, Hashable {
    /// The language of the last transcript that named one (ISO-639-1), or `nil`.
    private(set) var lastHeard: String?

    /// Takes the language a transcript was heard in (`nil` changes nothing).
    mutating func heard(_ language: String?) {
        if let language, !language.isEmpty { lastHeard = language.lowercased() }
    }

    /// The caller's language: the one last heard, else `configured`, else `nil` (unknown).
    func current(configured: String?) -> String? {
        lastHeard ?? configured.flatMap { $0.isEmpty ? nil : $0.lowercased() }
    }

    /// Whether `language` is English or unknown: the agent's own language, for which
    /// nothing is added and the English-only turn-taking rules apply.
    static func isEnglishOrUnknown(_ language: String?) -> Bool {
        language == nil || language == "en"
    }

    /// `instructions` with the line that asks for answers in `language`, or unchanged for
    /// English or an unknown language.
    static func instructions(_ instructions: String, answeringIn language: String?) -> String {
        guard let note = note(for: language) else { return instructions }
        return instructions.isEmpty ? note : instructions + "\n\n" + note
    }

    /// "The caller speaks German; answer in German." for `de`; `nil` for English or unknown.
    static func note(for language: String?) -> String? {
        guard let language, !isEnglishOrUnknown(language) else { return nil }
        let name = Locale(identifier: "en_US").localizedString(forLanguageCode: language) ?? language
        return "The caller speaks \(name); answer in \(name)."
    }
}
