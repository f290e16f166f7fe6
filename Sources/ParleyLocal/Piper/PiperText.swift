import Foundation

/// Cuts text for the Piper voice into clauses, each synthesised on its own so the first one
/// plays while the next is made, and each ending with its punctuation (a phoneme the voice
/// knows: it shapes the clause's intonation and the pause after it).
enum PiperText {
    /// A clause: words for espeak-ng and the mark that ended it (`,` `.` `?` …, or `nil`).
    struct Clause: Sendable, Hashable {
        var words: String
        var mark: Character?
    }

    /// The marks that end a clause when a space or the end of the text follows them.
    static let clauseMarks: Set<Character> = [",", ".", "!", "?", ";", ":", "…"]
    /// The longest clause in characters; a longer one is cut at its last space.
    static let maximumClauseLength = 200

    /// The clauses of `text`, in order, each with at least one letter or digit. Control
    /// characters become spaces; a mark inside a word or number (`3.5`, `e.g.`) does not cut.
    static func clauses(of text: String) -> [Clause] {
        let characters = Array(text.map { $0.isNewline || ($0.asciiValue.map { $0 < 0x20 || $0 == 0x7F } ?? false) ? " " : $0 })
        var clauses: [Clause] = []
        var current = ""
        for (index, character) in characters.enumerated() {
            let next = index + 1 < characters.count ? characters[index + 1] : " "
            if clauseMarks.contains(character), next.isWhitespace {
                append(Clause(words: current, mark: character == "…" ? "." : character), to: &clauses)
                current = ""
            } else {
                current.append(character)
                if current.count >= maximumClauseLength, let space = current.lastIndex(of: " ") {
                    append(Clause(words: String(current[..<space]), mark: nil), to: &clauses)
                    current = String(current[current.index(after: space)...])
                }
            }
        }
        append(Clause(words: current, mark: nil), to: &clauses)
        return clauses
    }

    private static func append(_ clause: Clause, to clauses: inout [Clause]) {
        let words = clause.words.trimmingCharacters(in: .whitespaces)
        guard words.contains(where: { $0.isLetter || $0.isNumber }) else { return }
        clauses.append(Clause(words: words, mark: clause.mark))
    }
}
