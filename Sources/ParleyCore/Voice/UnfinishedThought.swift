import Foundation

/// Reads a pause's transcript for a thought that cannot be over: one that stops on a word
/// needing more after it ("I'd like to book a flight to", "Add eggs, butter and", "Set an
/// alarm for") or trails off ("…", a final comma).
///
/// `semantic_vad` asks it when the audio model calls a pause complete, so that a sentence cut
/// at a preposition or a conjunction is not taken for a finished one. A question mark wins:
/// many questions end on a preposition ("Where are you from?"). Only English words are known;
/// other languages are judged from the audio alone.
public enum UnfinishedThought {
    /// Whether `transcript` stops where a thought cannot end.
    public static func isUnfinished(_ transcript: String) -> Bool {
        let text = transcript.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let last = text.last, last != "?", last != "!" else { return false }
        return trailsOff(text) || endsOnWordThatNeedsMore(text)
    }

    /// Whether the last word of `text` is one a statement does not end on, whatever mark follows.
    public static func endsOnWordThatNeedsMore(_ text: String) -> Bool {
        let lastWord = text.split(whereSeparator: { !$0.isLetter && $0 != "'" && $0 != "’" }).last.map { $0.lowercased() }
        return lastWord.map(wordsThatNeedMore.contains) ?? false
    }

    /// Whether `text` (trimmed) ends on a trailing-off mark: "...", "…", a comma or a dash.
    public static func trailsOff(_ text: String) -> Bool {
        guard let last = text.last else { return false }
        return text.hasSuffix("...") || last == "…" || last == "," || last == "-" || last == "—"
    }

    /// Articles, possessive determiners, conjunctions, prepositions and fillers: closed-class
    /// words that an English statement does not end on.
    static let wordsThatNeedMore: Set<String> = [
        "a", "an", "the", "my", "your", "our", "their",
        "and", "or", "but", "nor", "because", "if", "whether", "unless", "although", "though", "while",
        "to", "for", "with", "at", "in", "of", "from", "about", "into", "onto", "on", "by", "than", "like",
        "towards", "toward", "between", "without", "through", "via",
        "um", "uh", "er", "erm", "uhm",
    ]
}
