import Foundation

/// One decoded Whisper token's text and the probability the decoder gave it.
struct WhisperTokenPiece: Sendable, Hashable {
    var text: String
    var probability: Float

    /// How sure the decoder was of the last word of `pieces`: the lowest probability among the
    /// tokens from the last one that starts a word (with a space, or the first) to the end,
    /// punctuation after the word left out; `nil` when there is no word.
    static func lastWordConfidence(of pieces: [WhisperTokenPiece]) -> Float? {
        guard let lastWordToken = pieces.lastIndex(where: { $0.text.contains(where: \.isLetterOrDigit) }) else { return nil }
        let start = pieces[...lastWordToken].lastIndex { $0.text.first?.isWhitespace == true } ?? 0
        return pieces[start...lastWordToken].map(\.probability).min()
    }
}

private extension Character {
    var isLetterOrDigit: Bool { isLetter || isNumber }
}
