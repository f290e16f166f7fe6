import Foundation

/// The language the caller speaks — the one the recognizer heard, else the one the session was
/// told — and what the agent is told about it.
///
/// A caller who is not speaking English gets answers in their language: the agent's
/// instructions gain one line naming it ("The caller speaks German; answer in German."), which
/// changes only when the language does, so a model server's cached prompt is rebuilt once per
/// change. The voice follows it through `SpeechOptions.language`.
///
/// The first language heard is the caller's at once; another takes over once two turns in a
/// row were heard in it, so one utterance Whisper takes for another language (a short "okay",
/// a robotic voice) does not switch the conversation.
struct CallerLanguage: Sendable, Hashable {
    /// The caller's language as heard (ISO-639-1), or `nil` before any turn named one.
    private(set) var spoken: String?
    /// Another language the last turn was heard in, waiting for a second turn to take over.
    private var candidate: String?

    /// Takes the language a turn was heard in (`nil` changes nothing).
    mutating func heard(_ language: String?) {
        guard let language = language?.lowercased(), !language.isEmpty else { return }
        if spoken == nil || spoken == language || candidate == language {
            spoken = language
            candidate = nil
        } else {
            candidate = language
        }
    }

    /// The state after hearing `language`, for answering a turn before it is counted.
    func hearing(_ language: String?) -> CallerLanguage {
        var copy = self
        copy.heard(language)
        return copy
    }

    /// The caller's language: the one heard, else `configured`, else `nil` (unknown).
    func current(configured: String?) -> String? {
        spoken ?? configured.flatMap { $0.isEmpty ? nil : $0.lowercased() }
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
