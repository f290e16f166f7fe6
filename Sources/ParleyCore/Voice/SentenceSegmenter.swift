import Foundation

/// Cuts a reply streaming in as text deltas into speakable chunks, each as early as it is
/// safe to send to speech synthesis.
///
/// A chunk ends at a sentence end (`. ! ? …`, CJK `。！？`, Devanagari `।`, Arabic `؟`), at a
/// line break, at a comma once the clause is long, or at a space after `maximumWords` words.
/// A reply's first chunk ends sooner, so its audio is not held up by a long first sentence:
/// at its first comma, before a word that opens a phrase ("and", "because", "with", …) once
/// it has a few words, and at a space once it has `firstChunkMaximumWords`. A period is not a
/// sentence end in decimals (`3.5`), URLs, after titles (`Dr.`), initials and initialisms
/// (`J.`, `e.g.`, `U.S.`), after list numbers and ordinals (`1.`, `3. Oktober`), or when the
/// next word starts in lower case (which also keeps `wait... what` together). Deciding
/// needs the first character after a mark, so a chunk is released when that character
/// arrives, or by `flush()` at the end of the reply.
///
/// ```swift
/// var segmenter = SentenceSegmenter()
/// for try await delta in replyText { for chunk in segmenter.append(delta) { speak(chunk) } }
/// for chunk in segmenter.flush() { speak(chunk) }
/// ```
public struct SentenceSegmenter: Sendable {
    /// Tuning.
    public struct Configuration: Sendable, Hashable, Codable {
        /// Words after which the first chunk of a reply may end at a comma.
        public var firstClauseWords: Int
        /// Words after which the first chunk of a reply may end before a word that opens a
        /// phrase (English conjunctions and prepositions such as "and", "which", "with").
        public var firstPhraseWords: Int
        /// Words after which the first chunk of a reply is cut at the next space.
        public var firstChunkMaximumWords: Int
        /// Words after which later chunks may end at a comma.
        public var clauseWords: Int
        /// Words after which a chunk is cut at the next space.
        public var maximumWords: Int
        /// Characters after which a chunk is cut even inside a word (long URLs, unspaced scripts).
        public var maximumCharacters: Int

        /// Creates a configuration. The first chunk's defaults keep it to about 2 s of speech:
        /// its synthesis is the part of the reply's first audio that grows with its length.
        public init(
            firstClauseWords: Int = 1, firstPhraseWords: Int = 4, firstChunkMaximumWords: Int = 8,
            clauseWords: Int = 12, maximumWords: Int = 30, maximumCharacters: Int = 300
        ) {
            self.firstClauseWords = firstClauseWords
            self.firstPhraseWords = firstPhraseWords
            self.firstChunkMaximumWords = firstChunkMaximumWords
            self.clauseWords = clauseWords
            self.maximumWords = maximumWords
            self.maximumCharacters = maximumCharacters
        }
    }

    /// The tuning in use.
    public var configuration: Configuration
    /// Text received but not yet released.
    private var pending = ""
    /// Whether a chunk of the current reply was already released.
    private var releasedChunk = false

    /// Creates a segmenter.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Adds a text delta and returns the chunks it completed, trimmed, in order.
    public mutating func append(_ delta: String) -> [String] {
        pending += delta
        return release(isFinal: false)
    }

    /// Ends the reply: returns every remaining chunk and readies the segmenter for the next reply.
    public mutating func flush() -> [String] {
        let chunks = release(isFinal: true)
        pending = ""
        releasedChunk = false
        return chunks
    }

    /// Releases every chunk whose end is decided.
    private mutating func release(isFinal: Bool) -> [String] {
        var chunks: [String] = []
        var text = Array(pending)
        text.removeFirst(text.prefix { $0.isWhitespace }.count)
        while let end = nextBoundary(in: text, isFinal: isFinal) {
            let chunk = String(text[..<end]).trimmingCharacters(in: .whitespacesAndNewlines)
            text.removeFirst(end)
            text.removeFirst(text.prefix { $0.isWhitespace }.count)
            if !chunk.isEmpty {
                chunks.append(chunk)
                releasedChunk = true
            }
        }
        if isFinal {
            let rest = String(text).trimmingCharacters(in: .whitespacesAndNewlines)
            if !rest.isEmpty { chunks.append(rest) }
            text.removeAll()
        }
        pending = String(text)
        return chunks
    }

    /// The end (exclusive) of the first chunk of `text`, or `nil` when it is not decided yet.
    private func nextBoundary(in text: [Character], isFinal: Bool) -> Int? {
        let clauseWords = releasedChunk ? configuration.clauseWords : configuration.firstClauseWords
        var words = 0
        var inWord = false
        var lastSpace: Int?
        var index = 0
        while index < text.count {
            let character = text[index]
            if Self.isIdeographic(character) {
                words += 1
                inWord = false
            } else if character.isWhitespace {
                inWord = false
            } else if !inWord {
                words += 1
                inWord = true
            }
            let hasContent = words > 0
            if character.isNewline {
                return index + 1
            } else if character.isWhitespace {
                if words >= configuration.maximumWords { return index }
                if !releasedChunk, words >= configuration.firstChunkMaximumWords { return index }
                if !releasedChunk, words >= configuration.firstPhraseWords {
                    switch Self.nextWordOpensPhrase(in: text, after: index, isFinal: isFinal) {
                    case .some(true): return index
                    case .some(false): break
                    case .none: return nil
                    }
                }
            } else if Self.fullStops.contains(character) {
                let end = Self.skipClosers(in: text, from: index + 1)
                if end == text.count { return isFinal ? end : nil }
                return end
            } else if Self.latinEnds.contains(character) {
                var end = index + 1
                while end < text.count, Self.latinEnds.contains(text[end]) { end += 1 }
                end = Self.skipClosers(in: text, from: end)
                if end == text.count { return isFinal && hasContent ? end : nil }
                if text[end].isWhitespace {
                    var next = end
                    while next < text.count, text[next].isWhitespace {
                        if text[next].isNewline, hasContent { return end }
                        next += 1
                    }
                    if next == text.count { return isFinal && hasContent ? end : nil }
                    let marks = String(text[index..<end].filter { Self.latinEnds.contains($0) })
                    if hasContent, Self.endsSentence(text, markAt: index, marks: marks, nextWord: text[next]) {
                        return end
                    }
                }
                index = end - 1
            } else if Self.ideographicCommas.contains(character), words >= clauseWords {
                return index + 1
            } else if Self.latinCommas.contains(character), words >= clauseWords {
                if index + 1 == text.count { return nil }
                if text[index + 1].isWhitespace { return index + 1 }
            }
            if character.isWhitespace { lastSpace = index }
            if index + 1 >= configuration.maximumCharacters { return lastSpace ?? index + 1 }
            index += 1
        }
        return nil
    }

    /// Whether the word after the whitespace at `index` opens a phrase; `nil` while that word
    /// may still be growing.
    private static func nextWordOpensPhrase(in text: [Character], after index: Int, isFinal: Bool) -> Bool? {
        var start = index
        while start < text.count, text[start].isWhitespace { start += 1 }
        var end = start
        while end < text.count, text[end].isLetter { end += 1 }
        if end == text.count, !isFinal { return nil }
        return phraseOpeners.contains(String(text[start..<end]).lowercased())
    }

    /// Whether the marks at `markAt` (followed by whitespace, then `nextWord`) end a sentence.
    private static func endsSentence(_ text: [Character], markAt index: Int, marks: String, nextWord: Character) -> Bool {
        if nextWord.isLowercase { return false }
        guard marks == "." else { return true }
        var start = index
        while start > 0, !text[start - 1].isWhitespace { start -= 1 }
        let token = String(text[start..<index]).drop { !$0.isLetter && !$0.isNumber }
        if token.isEmpty { return true }
        if token.allSatisfy(\.isNumber) { return token.count > 2 }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        if parts.allSatisfy({ (1...2).contains($0.count) && $0.allSatisfy(\.isLetter) }), parts.count > 1 || token.count == 1 {
            return false
        }
        return !titles.contains(token.lowercased())
    }

    /// The index after any closing quotes and brackets at `start`, including ones set off by
    /// a space (French `« bonjour. »`).
    private static func skipClosers(in text: [Character], from start: Int) -> Int {
        var end = start
        while true {
            var next = end
            while next < text.count, text[next].isWhitespace, !text[next].isNewline { next += 1 }
            guard next < text.count, next == end ? closers.contains(text[next]) : text[next] == "»" else { return end }
            end = next + 1
        }
    }

    /// Whether `character` is a CJK ideograph or kana, each of which counts as a word.
    private static func isIdeographic(_ character: Character) -> Bool {
        guard let scalar = character.unicodeScalars.first?.value else { return false }
        return (0x3040...0x30FF).contains(scalar) || (0x3400...0x4DBF).contains(scalar)
            || (0x4E00...0x9FFF).contains(scalar) || (0xF900...0xFAFF).contains(scalar)
    }

    /// Marks that end a sentence outright, without needing a space after them.
    private static let fullStops: Set<Character> = ["。", "！", "？", "।", "؟", "۔", "։", "።"]
    /// Marks that end a sentence when followed by a space and a word that may start one.
    private static let latinEnds: Set<Character> = [".", "!", "?", "…"]
    /// Closing quotes and brackets that stay with the sentence they close.
    private static let closers: Set<Character> = ["\"", "'", "”", "’", ")", "]", "}", "»", "」", "』", "）", "】", "》"]
    /// Clause marks after which a long clause may be cut, when a space follows.
    private static let latinCommas: Set<Character> = [",", ";", ":", "،"]
    /// Clause marks after which a long clause may be cut, with no space needed.
    private static let ideographicCommas: Set<Character> = ["，", "、", "；", "："]
    /// English words before which a first chunk may end: a pause there sounds natural.
    private static let phraseOpeners: Set<String> = [
        "and", "but", "or", "so", "because", "which", "that", "who", "where", "when", "while", "although", "though",
        "if", "unless", "until", "since", "with", "without", "in", "on", "at", "for", "from", "about", "by", "into",
        "after", "before", "during", "through", "like", "than",
    ]
    /// Abbreviations that precede what they qualify, so a period after them never ends a sentence.
    private static let titles: Set<String> = [
        "mr", "mrs", "ms", "mx", "dr", "prof", "st", "mt", "sr", "sra", "srta", "dra", "hr", "fr", "mme", "mlle",
        "mgr", "gen", "gov", "sgt", "capt", "col", "lt", "rev", "hon", "vs", "approx", "ca", "cf", "vgl", "bzw",
        "nr", "fig", "eq", "vol", "pp", "no", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept",
        "oct", "nov", "dec",
    ]
}
