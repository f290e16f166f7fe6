import Foundation

extension AgentDefinition {
    /// The most words and phrases an agent's vocabulary holds.
    public static let maximumVocabularyEntries = 100
    /// The longest word or phrase, in characters.
    public static let maximumVocabularyEntryLength = 50
    /// The most characters of the whole vocabulary: Whisper keeps only the last 224 tokens of
    /// its prompt, about 600 characters of names, and the client's prompt comes before them.
    public static let maximumVocabularyLength = 600

    /// What is wrong with `vocabulary`, one line each.
    func vocabularyProblems() -> [String] {
        guard let vocabulary else { return [] }
        var problems: [String] = []
        if vocabulary.count > Self.maximumVocabularyEntries {
            problems.append("vocabulary: at most \(Self.maximumVocabularyEntries) words or phrases")
        }
        for (index, entry) in vocabulary.enumerated() {
            let trimmed = entry.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.count > Self.maximumVocabularyEntryLength {
                problems.append("vocabulary[\(index)]: must be 1 to \(Self.maximumVocabularyEntryLength) characters")
            } else if entry.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || CharacterSet.newlines.contains($0) }) {
                problems.append("vocabulary[\(index)]: must be one line without control characters")
            }
        }
        let total = vocabulary.reduce(0) { $0 + $1.count + 2 }
        if total > Self.maximumVocabularyLength {
            problems.append("vocabulary: at most \(Self.maximumVocabularyLength) characters in all (Whisper keeps only the end of a long prompt)")
        }
        return problems
    }

    /// The vocabulary as the recognizer is given it: each entry trimmed, empty ones left out.
    var recognizerVocabulary: [String] {
        (vocabulary ?? []).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
