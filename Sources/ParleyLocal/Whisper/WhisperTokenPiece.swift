import Foundation

/// One decoded Whisper token's text and the probability the decoder gave it.
struct WhisperTokenPiece: Sendable, Hashable {
    var text: String
    var probability: Float

    /// How sure the decoder was of each word of `pieces`, in order: the lowest probability
    /// among a word's tokens, from the one that starts it (with a space, or the first) to its
    /// last letter or digit, punctuation after the word left out. Pieces without a letter or
    /// digit are no word.
    static func wordConfidences(of pieces: [WhisperTokenPiece]) -> [Float] {
        let starts = pieces.indices.filter { $0 == pieces.startIndex || pieces[$0].text.first?.isWhitespace == true }
        return zip(starts, starts.dropFirst() + [pieces.endIndex]).compactMap { start, end in
            let word = pieces[start..<end]
            guard let lastSpoken = word.lastIndex(where: { $0.text.contains(where: \.isLetterOrDigit) }) else { return nil }
            return word[start...lastSpoken].map(\.probability).min()
        }
    }
}

private extension Character {
    var isLetterOrDigit: Bool { isLetter || isNumber }
}
